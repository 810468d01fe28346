// The conformance kit's kernel op table (bp-codegen conformance): one entry per kernel op with
// calls of its out=, functional and in-place forms from boxed arguments, matched by argument
// name (ops.yaml's validation has checked that the names match).
#include "gen_conformance.h"
#include "test_support.h"
#include "yaml_loader.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

constexpr const char* kOps =
    R"(- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  structured_delegate: add.out
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  variants: method
  structured_delegate: add.out
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: true
  dtypes: all
  pointwise: true
  meta: binary_with_alpha
- func: fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
  structured: true
  dtypes: all
  dtypes_of: self
)";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("conformance table: each form of a kernel op is called with its arguments by name") {
  const std::string table = generate_kernel_op_table(parse_native_functions(kOps, "ops.yaml"));
  CHECK(contains(table, "bp::add_out(outputs[0], args.tensor(0), args.tensor(1), args.scalar(2))"));
  CHECK(contains(table, "as_tensor_list(bp::add(args.tensor(0), args.tensor(1), args.scalar(2)))"));
  CHECK(contains(table,
                 "bp::detail::method_add__Tensor(args.mutable_tensor(0), args.tensor(1), "
                 "args.scalar(2))"));
  // fill_ writes its `self`: the table names it as the output, and it has no other forms.
  CHECK(contains(table, "fill__Scalar_outputs{\"self\"}"));
  CHECK(contains(table, "fill__Scalar_out, nullptr, \"\", nullptr,"));
}
