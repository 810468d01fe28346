// The typed model of ops.yaml and backend YAML files that every generator reads: schemas,
// their types and arguments, and the entries that carry them. Parsing lives in
// schema_parser.cpp and yaml_loader.cpp; this header only describes what was parsed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnostics.h"

namespace bp::codegen {

// The element kinds a schema type is built from.
enum class BaseKind { Tensor, Scalar, Int, Bool, Float, Str, ScalarType, Device };

// A schema type: a base kind, possibly a list (with an optional fixed size, `int[1]`), possibly
// optional (`?`). `Tensor?[]` (a list of optionals) is not a Backplane type, so one optional
// flag applied to the whole type is enough.
struct Type {
  BaseKind base = BaseKind::Tensor;
  bool is_list = false;
  std::optional<int64_t> list_size;  // only for lists: int[2]
  bool is_optional = false;

  bool is_tensor_like() const { return base == BaseKind::Tensor; }
  // Exactly `Tensor` (no list, no optional), the only type an alias annotation may mark.
  bool is_plain_tensor() const { return base == BaseKind::Tensor && !is_list && !is_optional; }
  std::string str() const;  // canonical spelling: "int[1]?"
  friend bool operator==(const Type&, const Type&) = default;
};

std::string_view base_kind_name(BaseKind kind);  // "Tensor", "int", "ScalarType", ...

// `(a!)` on `Tensor(a!)`: the tensor belongs to alias set `a`; `!` means the op writes it.
struct AliasAnnotation {
  std::string alias_set;
  bool is_write = false;
  std::string str() const;  // "(a!)"
  friend bool operator==(const AliasAnnotation&, const AliasAnnotation&) = default;
};

struct Argument {
  Type type;
  std::string name;
  std::optional<std::string> default_value;  // as written in the schema: "1", "False", "[]"
  std::optional<AliasAnnotation> annotation;
  bool kwarg_only = false;  // after the `*` marker

  bool is_write() const { return annotation && annotation->is_write; }
  // An `out=` argument: a written tensor after `*`.
  bool is_out() const { return kwarg_only && is_write(); }
  std::string str() const;  // "Tensor(a!) out", "Scalar alpha=1"
};

struct Return {
  Type type;
  std::string name;  // empty when unnamed
  std::optional<AliasAnnotation> annotation;

  bool is_write() const { return annotation && annotation->is_write; }
  std::string str() const;
};

// `add.out`: the operator name and the overload name (possibly empty).
struct OperatorName {
  std::string name;
  std::string overload_name;

  std::string str() const;       // "add.out", "copy_"
  std::string cpp_name() const;  // "add_out", "fill__Scalar" (see docs/generated-code.md)
  // PyTorch's convention: an in-place op's name ends with '_' ("add_", "copy_").
  bool is_inplace() const { return !name.empty() && name.back() == '_'; }
  friend bool operator==(const OperatorName&, const OperatorName&) = default;
};

struct FunctionSchema {
  OperatorName name;
  std::vector<Argument> arguments;  // positional first, then keyword-only (kwarg_only)
  std::vector<Return> returns;

  // The canonical string; bp_schema_hash() of it is the schema hash.
  std::string str() const;
  uint64_t hash() const;

  // The `out=` arguments, in order, and everything else.
  std::vector<const Argument*> out_arguments() const;
  std::vector<const Argument*> non_out_arguments() const;
  bool is_out_fn() const { return !out_arguments().empty(); }
  const Argument* find_argument(std::string_view name) const;
};

// The dtype classes that ops.yaml's `dtypes:` names (torchgen's names where it has them).
enum class DTypeClass { All, AllButBool, Floating };
inline constexpr DTypeClass kDTypeClasses[] = {DTypeClass::All, DTypeClass::AllButBool,
                                               DTypeClass::Floating};
std::string_view dtype_class_name(DTypeClass dtypes);  // "all_but_bool"

// The generated-variant flags of an ops.yaml entry.
struct Variants {
  bool function = true;
  bool method = false;
};

// One entry of ops.yaml.
struct NativeFunction {
  FunctionSchema func;
  Variants variants;
  bool structured = false;
  bool composite = false;
  // A structured op whose every output element comes from the input elements at its own
  // position (after broadcasting), so that its output may be one of its inputs exactly: the
  // core then hands the kernel that tensor itself (in-place ops). Any other overlap between an
  // output and an input, and any overlap at all for ops that are not pointwise, goes through
  // a temporary output.
  bool pointwise = false;
  // The meta function name of a structured op (its cpp name unless `meta:` says otherwise).
  std::string meta;
  std::optional<OperatorName> structured_delegate;
  // The dtypes a structured op's kernel takes, in the argument `dtypes_of` names (validation
  // sets it to the first written tensor when the entry has no `dtypes_of:`).
  std::optional<DTypeClass> dtypes;
  std::string dtypes_of;
  // Where the entry's values are, for messages about them.
  SourceLocation location;            // the `func:` value
  SourceLocation meta_location;       // the `meta:` value (or `func:` when absent)
  SourceLocation delegate_location;   // the `structured_delegate:` value
  SourceLocation pointwise_location;  // the `pointwise:` value (or `func:` when absent)
  SourceLocation dtypes_location;     // the `dtypes:` value (or `func:` when absent)
  SourceLocation dtypes_of_location;  // the `dtypes_of:` value (or `func:` when absent)

  bool is_structured_delegate() const { return structured_delegate.has_value(); }
  bool is_method_only() const { return variants.method && !variants.function; }
};

struct NativeFunctions {
  std::string path;
  std::vector<NativeFunction> functions;  // in ops.yaml order

  const NativeFunction* find(const OperatorName& name) const;
  const NativeFunction* find(std::string_view qualified_name) const;  // "add.out"
  // Every structured op ("kernel op"), in ops.yaml order: the OpId order.
  std::vector<const NativeFunction*> kernel_ops() const;
};

// One `supported:` entry of a backend YAML.
struct SupportedOp {
  const NativeFunction* function = nullptr;
  SourceLocation location;
};

struct BackendConfig {
  std::string path;
  std::string backend;        // "OpenCL": used in file names
  std::string cpp_namespace;  // "bp::opencl"
  std::string version = "0.1.0";
  std::vector<SupportedOp> supported;  // in YAML order

  std::string lower_case_name() const;  // "opencl": the name in BACKPLANE_BACKENDS
};

}  // namespace bp::codegen
