// What the Python generator writes for the real ops.yaml (docs/generated-code.md, "Python
// outputs"), and the entries it refuses because Python or the argument parser cannot take them.
#include "gen_python.h"

#include <fmt/format.h>

#include "test_support.h"
#include "yaml_loader.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

const NativeFunctions& ops() {
  static const NativeFunctions functions = load_native_functions(ops_yaml_path().string());
  return functions;
}

const std::string& bindings() {
  static const std::string text = generate_python_functions_cpp(ops());
  return text;
}

const std::string& stubs() {
  static const std::string text = generate_python_stubs(ops());
  return text;
}

bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

// The text of the generated C++ function `name` (function_add, method_add_).
std::string binding(const std::string& name) {
  const std::string& text = bindings();
  const size_t start = text.find("\nPyObject* " + name + "(");
  REQUIRE_MESSAGE(start != std::string::npos, "no binding " << name);
  return text.substr(start, text.find("\n}\n", start) - start);
}

std::string error_for(const std::string& entry) {
  return error_of([&] {
    generate_python_functions_cpp(
        parse_native_functions(entry + "  composite: true\n", "ops.yaml"));
  });
}

}  // namespace

TEST_CASE("python generation writes the bindings and the stubs under the output folder") {
  const auto files = generate_python(ops(), "gen");
  REQUIRE(files.size() == 2);
  CHECK(files[0].path.generic_string() == "gen/python_functions.cpp");
  CHECK(files[1].path.generic_string() == "gen/_C.pyi");
  CHECK(files[0].content == bindings());
  CHECK(files[1].content == stubs());
}

TEST_CASE("Param tables: Python names and types, keyword-only, converted defaults, list sizes") {
  const std::string add = binding("function_add");
  CHECK(contains(add,
                 "    static constexpr Param add_Tensor_params[] = {\n"
                 "        {.name = \"input\", .type = ParamType::Tensor},\n"
                 "        {.name = \"other\", .type = ParamType::Tensor},\n"
                 "        {.name = \"alpha\", .type = ParamType::Scalar, .keyword_only = true, "
                 ".default_value = Default::integer(1)},\n"
                 "    };\n"));
  const std::string conv2d = binding("function_conv2d");
  CHECK(contains(conv2d,
                 "{.name = \"bias\", .type = ParamType::OptionalTensor, .default_value = "
                 "Default::none()},\n"));
  CHECK(contains(conv2d,
                 "{.name = \"stride\", .type = ParamType::IntList, .default_value = "
                 "Default::int_list({1, 1}), .list_size = 2},\n"));
  CHECK(contains(conv2d,
                 "{.name = \"padding\", .type = ParamType::IntList, .default_value = "
                 "Default::int_list({0, 0}), .list_size = 2},\n"));
  CHECK(contains(conv2d,
                 "{.name = \"groups\", .type = ParamType::Int, .default_value = "
                 "Default::integer(1)},\n"));
  CHECK(contains(binding("function_max_pool2d"),
                 "{.name = \"stride\", .type = ParamType::IntList, .default_value = "
                 "Default::int_list({}), .list_size = 2},\n"));
  CHECK(contains(binding("function_amax"),
                 "{.name = \"dim\", .type = ParamType::IntList, "
                 ".default_value = Default::int_list({}), "
                 ".list_size = 1},\n"));
  CHECK(contains(binding("function_sum"),
                 "{.name = \"dim\", .type = ParamType::OptionalIntList, .list_size = 1},\n"));
  CHECK(contains(binding("function_sum"),
                 "{.name = \"dtype\", .type = ParamType::OptionalScalarType, .keyword_only = "
                 "true, .default_value = Default::none()},\n"));
  CHECK(contains(binding("function_layer_norm"),
                 "{.name = \"eps\", .type = ParamType::Float, .default_value = "
                 "Default::floating(1e-05)},\n"));
  CHECK(contains(binding("function_layer_norm"),
                 "{.name = \"cudnn_enable\", .type = ParamType::Bool, .default_value = "
                 "Default::boolean(true)},\n"));
  CHECK(contains(binding("function_gelu"),
                 "{.name = \"approximate\", .type = ParamType::Str, .keyword_only = true, "
                 ".default_value = Default::string(\"none\")},\n"));
  CHECK(contains(binding("function_nll_loss"),
                 "{.name = \"ignore_index\", .type = ParamType::Int, .default_value = "
                 "Default::integer(-100)},\n"));
  CHECK(
      contains(binding("function_cat"), "{.name = \"tensors\", .type = ParamType::TensorList},\n"));
  CHECK(contains(binding("function_arange"),
                 "{.name = \"device\", .type = ParamType::OptionalDevice, .keyword_only = true, "
                 ".default_value = Default::none()},\n"));
}

TEST_CASE("out= overloads take one keyword-only, required `out`, a tuple for several outputs") {
  CHECK(contains(binding("function_add"),
                 "        {.name = \"alpha\", .type = ParamType::Scalar, .keyword_only = true, "
                 ".default_value = Default::integer(1)},\n"
                 "        {.name = \"out\", .type = ParamType::OutTensor, .keyword_only = true},\n"
                 "    };\n"));
  // The schema calls the output grad_input; Python calls it out.
  CHECK(contains(binding("function_threshold_backward"),
                 "{.name = \"out\", .type = ParamType::OutTensor, .keyword_only = true},\n"));
  const std::string max = binding("function_max");
  CHECK(contains(max,
                 "{.name = \"out\", .type = ParamType::OutTensorTuple, .keyword_only = true, "
                 ".list_size = 2},\n"));
  CHECK(contains(max,
                 "        Tensor max = parsed.out_tensor(3, 0);\n"
                 "        Tensor max_values = parsed.out_tensor(3, 1);\n"
                 "        return wrap(without_gil([&] { return bp::max_out(max, max_values, self, "
                 "dim, keepdim); }), return_type_max());\n"));
}

TEST_CASE("each case reads every argument into a local, then calls the C++ API without the GIL") {
  CHECK(contains(binding("function_add"),
                 "      case 0: {  // add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
                 "Tensor\n"
                 "        const Tensor self = parsed.tensor(0);\n"
                 "        const Tensor other = parsed.tensor(1);\n"
                 "        const Scalar alpha = parsed.scalar(2);\n"
                 "        return wrap(without_gil([&] { return bp::add(self, other, alpha); }));\n"
                 "      }\n"));
  // Out= and in-place calls return the very object the caller passed.
  CHECK(contains(binding("function_add"),
                 "        Tensor out = parsed.tensor(3);\n"
                 "        without_gil([&] { bp::add_out(out, self, other, alpha); });\n"
                 "        return parsed.returned_argument(3);\n"));
  CHECK(
      contains(binding("method_add_"),
               "        Tensor self = parsed.tensor(0);\n"
               "        const Tensor other = parsed.tensor(1);\n"
               "        const Scalar alpha = parsed.scalar(2);\n"
               "        without_gil([&] { bp::detail::method_add__Tensor(self, other, alpha); });\n"
               "        return parsed.returned_argument(0);\n"));
  CHECK(contains(binding("function_neg_"),
                 "without_gil([&] { bp::neg_(self); });\n"
                 "        return parsed.returned_argument(0);\n"));
  CHECK(contains(binding("method_copy_"),
                 "without_gil([&] { bp::detail::method_copy_(self, src, non_blocking); });\n"));
  // The public API takes an OptionalIntArrayRef, which views the local DimVector.
  CHECK(
      contains(binding("function_sum"),
               "        const std::optional<DimVector> dim = parsed.optional_int_list(1);\n"
               "        const bool keepdim = parsed.to_bool(2);\n"
               "        const std::optional<DType> dtype = parsed.optional_scalar_type(3);\n"
               "        return wrap(without_gil([&] { return bp::sum(self, dim ? "
               "OptionalIntArrayRef(dim->ref()) : OptionalIntArrayRef(), keepdim, dtype); }));\n"));
  CHECK(contains(binding("function_conv2d"),
                 "        const DimVector stride = parsed.int_list(3);\n"));
  CHECK(contains(binding("function_arange"),
                 "        const std::optional<Device> device = parsed.optional_device(4);\n"));
  // Named returns make a named tuple; unnamed ones a plain tuple.
  CHECK(contains(binding("function_max"),
                 "return wrap(without_gil([&] { return bp::max(self, dim, keepdim); }), "
                 "return_type_max());\n"));
  CHECK(contains(bindings(),
                 "PyTypeObject* return_type_max() {\n"
                 "  static PyTypeObject* type = nullptr;\n"
                 "  if (type == nullptr) type = named_return_type("
                 "\"backplane.return_types.max\", {\"values\", \"indices\"});\n"));
  CHECK(contains(binding("function_native_layer_norm"),
                 "return wrap(without_gil([&] { return bp::native_layer_norm(input, "
                 "normalized_shape, weight, bias, eps); }));\n"));
}

TEST_CASE("functions take an operator's function entries, methods its method entries") {
  CHECK(contains(binding("function_add"),
                 "    static const ArgParser parser(\"add\", false, {\n"
                 "        Signature{\"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
                 "Tensor\", add_Tensor_params},\n"
                 "        Signature{\"add.out(Tensor self, Tensor other, *, Scalar alpha=1, "
                 "Tensor(a!) out) -> Tensor(a!)\", add_out_params},\n"
                 "        Signature{\"add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> "
                 "Tensor\", add_Scalar_params},\n"
                 "    });\n"
                 "    ParsedArgs parsed;\n"
                 "    switch (parser.parse(nullptr, args, nargs, kwnames, parsed)) {\n"));
  const std::string method = binding("method_add");
  CHECK(contains(method, "static const ArgParser parser(\"add\", true, {\n"));
  CHECK(contains(method, "switch (parser.parse(self, args, nargs, kwnames, parsed)) {\n"));
  CHECK(!contains(method, "add.out"));
  // add_ is only a method; neg_ is both.
  CHECK(!contains(bindings(), "PyObject* function_add_("));
  CHECK(contains(bindings(), "PyObject* function_neg_("));
  // The receiver comes first in a method, wherever the schema has it.
  CHECK(contains(binding("method_where"),
                 "        {.name = \"self\", .type = ParamType::Tensor},\n"
                 "        {.name = \"condition\", .type = ParamType::Tensor},\n"
                 "        {.name = \"other\", .type = ParamType::Tensor},\n"));
  CHECK(contains(binding("method_where"), "return bp::where(condition, self, other);"));
  CHECK(contains(binding("function_where"), "{.name = \"input\", .type = ParamType::Tensor},\n"));
  // Tensor.to is its three schemas, tried in ops.yaml order: dtype, device, other.
  CHECK(contains(binding("method_to"), "\"to.dtype(Tensor(a) self, ScalarType dtype, "));
  CHECK(contains(binding("method_to"), "return bp::detail::method_to_other(self, other, "));
}

TEST_CASE("method tables with docstrings, and the list of schemas bound") {
  CHECK(contains(bindings(),
                 "PyMethodDef generated_functions[] = {\n"
                 "    {\"add\", as_py_cfunction(&function_add), METH_FASTCALL | METH_KEYWORDS,\n"
                 "     \"add(input, other, *, alpha=1) -> Tensor\\n\"\n"
                 "     \"add(input, other, *, alpha=1, out) -> Tensor\\n\"\n"
                 "     \"add(input, other, alpha=1) -> Tensor\\n\"\n"
                 "     \"\\n\"\n"
                 "     \"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\\n\"\n"
                 "     \"add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
                 "Tensor(a!)\\n\"\n"
                 "     \"add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\"},\n"));
  CHECK(contains(bindings(),
                 "PyMethodDef generated_tensor_methods[] = {\n"
                 "    {\"add\", as_py_cfunction(&method_add), METH_FASTCALL | METH_KEYWORDS,\n"
                 "     \"add(other, *, alpha=1) -> Tensor\\n\"\n"));
  // Overloads that read the same in Python are listed once, their schemas each.
  CHECK(contains(bindings(),
                 "     \"mul(input, other) -> Tensor\\n\"\n"
                 "     \"mul(input, other, *, out) -> Tensor\\n\"\n"
                 "     \"\\n\"\n"));
  CHECK(contains(bindings(),
                 "     \"max(input, dim, keepdim=False) -> (Tensor values, Tensor "
                 "indices)\\n\"\n"));
  CHECK(contains(bindings(), "    {nullptr, nullptr, 0, nullptr},\n};\n"));

  // Every entry once, in ops.yaml order.
  std::string expected = "const char* const generated_schemas[] = {\n";
  for (const NativeFunction& f : ops().functions) {
    expected += fmt::format("    \"{}\",\n", f.func.str());
  }
  expected += "    nullptr,\n};\n";
  CHECK(contains(bindings(), expected));
}

TEST_CASE("_C.pyi: every function and method, @overload'ed when it has several signatures") {
  CHECK(contains(stubs(),
                 "@overload\n"
                 "def add(input: Tensor, other: Tensor, *, alpha: Number = 1) -> Tensor: ...\n"
                 "@overload\n"
                 "def add(input: Tensor, other: Tensor, *, alpha: Number = 1, out: Tensor) -> "
                 "Tensor: ...\n"
                 "@overload\n"
                 "def add(input: Tensor, other: Number, alpha: Number = 1) -> Tensor: ...\n"));
  CHECK(contains(stubs(),
                 "\n    @overload\n"
                 "    def add(self, other: Tensor, *, alpha: Number = 1) -> Tensor: ...\n"));
  CHECK(contains(stubs(), "\ndef neg_(input: Tensor) -> Tensor: ...\n"));
  CHECK(
      contains(stubs(),
               "def conv2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, "
               "stride: Union[_int, Sequence[_int]] = 1, padding: Union[_int, Sequence[_int]] = 0, "
               "dilation: Union[_int, Sequence[_int]] = 1, groups: _int = 1) -> Tensor: ...\n"));
  CHECK(contains(stubs(),
                 "def sum(self, dim: Optional[Union[_int, Sequence[_int]]], keepdim: _bool "
                 "= False, *, dtype: Optional[_dtype] = None) -> Tensor: ...\n"));
  // The argument parser also takes a lone int list as separate ints: x.view(2, 3).
  CHECK(contains(stubs(),
                 "    @overload\n"
                 "    def view(self, size: Sequence[_int]) -> Tensor: ...\n"
                 "    @overload\n"
                 "    def view(self, *size: _int) -> Tensor: ...\n"));
  CHECK(contains(stubs(), "\ndef reshape(input: Tensor, shape: Sequence[_int]) -> Tensor: ...\n"));
  CHECK(contains(stubs(), "def cat(tensors: Sequence[Tensor], dim: _int = 0) -> Tensor: ...\n"));
  CHECK(
      contains(stubs(), "def gelu(input: Tensor, *, approximate: str = 'none') -> Tensor: ...\n"));
  CHECK(contains(stubs(),
                 "def arange(end: Number, *, dtype: Optional[_dtype] = None, device: "
                 "Optional[Union[_device, str]] = None) -> Tensor: ...\n"));
  CHECK(contains(stubs(),
                 "def max(input: Tensor, dim: _int, keepdim: _bool = False, *, out: "
                 "Tuple[Tensor, Tensor]) -> _return_types_max: ...\n"));
  CHECK(contains(stubs(),
                 "class _return_types_max(NamedTuple):\n"
                 "    values: Tensor\n"
                 "    indices: Tensor\n"));
  CHECK(contains(stubs(),
                 "def native_layer_norm(input: Tensor, normalized_shape: Sequence[_int], "
                 "weight: Optional[Tensor], bias: Optional[Tensor], eps: _float) -> "
                 "Tuple[Tensor, Tensor, Tensor]: ...\n"));
  // The hand-written part of the skeleton is there; `to` is generated like any method.
  CHECK(contains(stubs(),
                 "class Tensor:\n    @property\n    def shape(self) -> Tuple[_int, ...]: ..."));
  CHECK(contains(stubs(),
                 "    def to(self, other: Tensor, non_blocking: _bool = False, "
                 "copy: _bool = False) -> Tensor: ...\n"));
}

TEST_CASE("entries that Python or the argument parser cannot take are errors at the entry") {
  CHECK(error_for("- func: foo(Tensor self, int lambda) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': argument 'lambda' is a Python keyword, which Python cannot "
        "take as a parameter name; rename it");
  CHECK(error_for("- func: foo(Tensor self, Tensor input) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': two Python parameters would be named 'input': the function "
        "form gives that name to 'self'; rename argument 'input'");
  CHECK(error_for("- func: foo.out(Tensor self, int out, *, Tensor(a!) result) -> Tensor(a!)\n") ==
        "ops.yaml:1:9: error: 'foo.out': two Python parameters would be named 'out': Python gives "
        "that name to the out= arguments; rename argument 'out'");
  CHECK(error_for("- func: foo(Tensor self, int parsed) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': argument 'parsed' has the name of something the generated "
        "binding uses itself; rename the argument");
  CHECK(error_for("- func: foo(Tensor self, int a=1, int b) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': positional argument 'b' has no default but follows 'a', "
        "which has one: Python cannot declare that; give 'b' a default or move it");
  CHECK(error_for("- func: foo(Tensor self, int[5] size=1) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': the default of 'size' (1) has 5 values; the Python argument "
        "parser keeps at most 4 (Default::list in python/src/arg_parser.h)");
  CHECK(error_for("- func: foo(Tensor self, int[1000000000] size=1) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': the default of 'size' (1) has 1000000000 values; the Python "
        "argument parser keeps at most 4 (Default::list in python/src/arg_parser.h)");
  CHECK(error_for("- func: foo(Tensor self, int[] size=[1, 2, 3, 4, 5]) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': the default of 'size' ([1, 2, 3, 4, 5]) has 5 values; the "
        "Python argument parser keeps at most 4 (Default::list in python/src/arg_parser.h)");
  CHECK(error_for("- func: foo(Tensor self, int a=99999999999999999999) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': the default of 'a' (99999999999999999999) does not fit in a "
        "64-bit integer");
  CHECK(error_for("- func: foo(Tensor self, float a=1e999) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': the default of 'a' (1e999) is out of the range of a double");
  std::string many = "- func: foo(Tensor self";
  for (int i = 0; i < 16; ++i) many += fmt::format(", int a{}", i);
  CHECK(error_for(many + ") -> Tensor\n") ==
        "ops.yaml:1:9: error: 'foo': 17 Python parameters are more than the 16 that the argument "
        "parser takes (ParsedArgs::kMaxParams in python/src/arg_parser.h)");
  // At the limits, and the smallest int64 spelled so that C++ reads it.
  CHECK(error_for("- func: foo(Tensor self, int[4] size=1, int a=-9223372036854775808) -> "
                  "Tensor\n") == "<no error>");
  CHECK(contains(generate_python_functions_cpp(parse_native_functions(
                     "- func: foo(Tensor self, int a=-9223372036854775808) -> Tensor\n"
                     "  composite: true\n",
                     "ops.yaml")),
                 ".default_value = Default::integer((-9223372036854775807 - 1))}"));
}
