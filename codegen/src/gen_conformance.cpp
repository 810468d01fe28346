#include "gen_conformance.h"

#include <fmt/format.h>

#include <stdexcept>

#include "cpp_types.h"
#include "embedded_templates.h"
#include "signatures.h"

namespace bp::codegen {

namespace {

// The OpArguments reader (conformance/include/backplane/conformance/op_arguments.h) of each
// schema type.
std::string_view reader_of(const Type& type) {
  switch (classify(type)) {
    case TypeCategory::Tensor: return "tensor";
    case TypeCategory::OptionalTensor: return "optional_tensor";
    case TypeCategory::TensorList: return "tensor_list";
    case TypeCategory::Scalar: return "scalar";
    case TypeCategory::Int: return "int64";
    case TypeCategory::OptionalInt: return "optional_int64";
    case TypeCategory::IntList: return "int64_list";
    case TypeCategory::OptionalIntList: return "optional_int64_list";
    case TypeCategory::Bool: return "boolean";
    case TypeCategory::Float: return "float64";
    case TypeCategory::OptionalFloat: return "optional_float64";
    case TypeCategory::Str: return "string";
    case TypeCategory::ScalarType: return "dtype";
    case TypeCategory::OptionalScalarType: return "optional_dtype";
    case TypeCategory::Device:
    case TypeCategory::OptionalDevice: break;
  }
  throw std::logic_error(type.str() + " is not a kernel op's type");
}

// A kernel op's parameters are its arguments that it does not write; its outputs are the ones
// it writes (out= arguments, or `self` of copy_ and fill_).
std::vector<const Argument*> parameters_of(const NativeFunction& op) {
  std::vector<const Argument*> parameters;
  for (const Argument& a : op.func.arguments) {
    if (!a.is_write()) parameters.push_back(&a);
  }
  return parameters;
}

std::vector<const Argument*> outputs_of(const NativeFunction& op) {
  std::vector<const Argument*> outputs;
  for (const Argument& a : op.func.arguments) {
    if (a.is_write()) outputs.push_back(&a);
  }
  return outputs;
}

size_t index_of(const std::vector<const Argument*>& arguments, const std::string& name) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i]->name == name) return i;
  }
  return arguments.size();
}

std::string qualified_name(const NativeFunction& f) {
  const CppSignature signature = function_signature(f);
  return has_detail_method_function(f) ? "bp::detail::" + signature.name : "bp::" + signature.name;
}

// The call of overload `f` of kernel op `op` with the kernel op's boxed arguments: a written
// argument is the kernel op's output of that name (`outputs`), or, for an in-place overload,
// the parameter of that name, which the call writes.
std::string call_of(const NativeFunction& op, const NativeFunction& f) {
  const std::vector<const Argument*> parameters = parameters_of(op);
  const std::vector<const Argument*> outputs = outputs_of(op);
  std::vector<std::string> arguments;
  for (const CppParameter& p : function_signature(f).parameters) {
    const Argument& a = *p.argument;
    if (a.is_write() && f.func.name == op.func.name) {
      arguments.push_back(fmt::format("outputs[{}]", index_of(outputs, a.name)));
      continue;
    }
    const size_t index = index_of(parameters, a.name);
    // ops.yaml's validation has matched a delegate's arguments with its kernel op's.
    if (index == parameters.size()) {
      throw std::logic_error(fmt::format("'{}' has argument '{}', which kernel op '{}' lacks",
                                         f.func.name.str(), a.name, op.func.name.str()));
    }
    if (a.is_write()) {
      arguments.push_back(fmt::format("args.mutable_tensor({})", index));
    } else {
      arguments.push_back(fmt::format("args.{}({})", reader_of(a.type), index));
    }
  }
  return fmt::format("{}({})", qualified_name(f), comma_list(arguments));
}

// The delegates of `op` that return new tensors, and that write their `self` in place.
const NativeFunction* functional_of(const NativeFunctions& functions, const NativeFunction& op) {
  for (const NativeFunction& f : functions.functions) {
    if (f.structured_delegate == op.func.name && !f.func.name.is_inplace() && !f.func.is_out_fn())
      return &f;
  }
  return nullptr;
}

const NativeFunction* in_place_of(const NativeFunctions& functions, const NativeFunction& op) {
  for (const NativeFunction& f : functions.functions) {
    if (f.structured_delegate == op.func.name && f.func.name.is_inplace()) return &f;
  }
  return nullptr;
}

std::string quoted_names(const std::vector<const Argument*>& arguments) {
  std::vector<std::string> names;
  for (const Argument* a : arguments) names.push_back(fmt::format("\"{}\"", a->name));
  return comma_list(names);
}

std::string parameter_rows(const std::vector<const Argument*>& parameters) {
  std::vector<std::string> rows;
  for (const Argument* a : parameters)
    rows.push_back(fmt::format("{{\"{}\", \"{}\"}}", a->name, a->type.str()));
  return comma_list(rows);
}

}  // namespace

std::string generate_kernel_op_table(const NativeFunctions& functions) {
  TemplateLines entries, table;
  for (const NativeFunction* op : functions.kernel_ops()) {
    const std::string id = op->func.name.cpp_name();
    const NativeFunction* functional = functional_of(functions, *op);
    const NativeFunction* in_place = in_place_of(functions, *op);
    const std::vector<const Argument*> parameters = parameters_of(*op);
    const std::vector<const Argument*> outputs = outputs_of(*op);
    entries.push_back(fill_template(
        "KernelOpTable.cpp.entry.in",
        {
            {"schema", op->func.str()},
            {"id", id},
            {"parameter_count", std::to_string(parameters.size())},
            {"parameters", parameter_rows(parameters)},
            {"output_count", std::to_string(outputs.size())},
            {"outputs", quoted_names(outputs)},
            {"out_call", call_of(*op, *op)},
            {"functional", functional
                               ? fill_template("KernelOpTable.cpp.functional.in",
                                               {{"id", id}, {"call", call_of(*op, *functional)}})
                               : std::string()},
            {"in_place", in_place ? fill_template("KernelOpTable.cpp.in_place.in",
                                                  {{"id", id}, {"call", call_of(*op, *in_place)}})
                                  : std::string()},
        }));
    table.push_back(
        fill_template("KernelOpTable.cpp.row.in",
                      {
                          {"name", op->func.name.str()},
                          {"schema", op->func.str()},
                          {"id", id},
                          {"dtypes_of", op->dtypes_of},
                          {"pointwise", op->pointwise ? "true" : "false"},
                          {"functional", functional ? id + "_functional" : "nullptr"},
                          {"functional_name", functional ? functional->func.name.str() : ""},
                          {"in_place", in_place ? id + "_in_place" : "nullptr"},
                          {"in_place_name", in_place ? in_place->func.name.str() : ""},
                      }));
  }
  return fill_template("KernelOpTable.cpp.in", {{"entries", entries}, {"table", table}});
}

}  // namespace bp::codegen
