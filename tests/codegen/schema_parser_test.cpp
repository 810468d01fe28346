// Schema strings: what parses, what it means, how it prints back, and what a mistake says.
#include "schema_parser.h"

#include <backplane/abi.h>
#include <yaml-cpp/yaml.h>

#include "test_support.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

// The message a schema's syntax error carries ("column N: ...").
std::string syntax_error_of(const std::string& schema) {
  try {
    parse_schema(schema);
  } catch (const SchemaSyntaxError& e) {
    return e.what();
  }
  return "<no error>";
}

std::vector<std::string> ops_yaml_schemas() {
  std::vector<std::string> schemas;
  for (const YAML::Node& entry : YAML::LoadFile(ops_yaml_path().string())) {
    schemas.push_back(entry["func"].as<std::string>());
  }
  return schemas;
}

}  // namespace

TEST_CASE("every schema in ops.yaml prints back exactly as written (ops.yaml is canonical)") {
  const auto schemas = ops_yaml_schemas();
  REQUIRE(schemas.size() > 50);
  for (const std::string& schema : schemas) {
    CAPTURE(schema);
    CHECK(parse_schema(schema).str() == schema);
  }
}

TEST_CASE("the schema hash is bp_schema_hash of the canonical string") {
  for (const std::string& schema : ops_yaml_schemas()) {
    CAPTURE(schema);
    CHECK(parse_schema(schema).hash() == bp_schema_hash(schema.c_str()));
  }
  SUBCASE("and whitespace in the input does not change it") {
    const auto loose = parse_schema(
        "add.out( Tensor self ,Tensor other, * ,Scalar alpha=1, Tensor(a!) out )->Tensor(a!)");
    CHECK(loose.str() ==
          "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
    CHECK(
        loose.hash() ==
        bp_schema_hash(
            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"));
  }
}

TEST_CASE("a parsed schema has its name, typed arguments and returns") {
  const FunctionSchema s = parse_schema(
      "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) "
      "max_values) -> (Tensor(a!) values, Tensor(b!) indices)");
  CHECK(s.name.name == "max");
  CHECK(s.name.overload_name == "dim_max");
  CHECK(s.name.cpp_name() == "max_dim_max");
  REQUIRE(s.arguments.size() == 5);

  CHECK(s.arguments[0].type == Type{BaseKind::Tensor, false, std::nullopt, false});
  CHECK(s.arguments[0].name == "self");
  CHECK_FALSE(s.arguments[0].kwarg_only);
  CHECK(s.arguments[1].type.base == BaseKind::Int);
  CHECK(s.arguments[2].default_value == "False");

  const Argument& max = s.arguments[3];
  CHECK(max.kwarg_only);
  CHECK(max.annotation == AliasAnnotation{"a", true});
  CHECK(max.is_out());
  CHECK(s.out_arguments().size() == 2);
  CHECK(s.non_out_arguments().size() == 3);

  REQUIRE(s.returns.size() == 2);
  CHECK(s.returns[0].name == "values");
  CHECK(s.returns[1].annotation == AliasAnnotation{"b", true});
}

TEST_CASE("types: lists with and without a size, optionals, every base kind") {
  const FunctionSchema s = parse_schema(
      "f(Tensor? a, Tensor[] b, int[1]? c, int[] d, int? e, float f, str g, ScalarType? h, "
      "Device? i, Scalar j, ScalarType k) -> Tensor");
  CHECK(s.arguments[0].type.is_optional);
  CHECK(s.arguments[1].type.is_list);
  CHECK(s.arguments[2].type == Type{BaseKind::Int, true, 1, true});
  CHECK(s.arguments[3].type == Type{BaseKind::Int, true, std::nullopt, false});
  CHECK(s.arguments[4].type.str() == "int?");
  CHECK(s.arguments[5].type.base == BaseKind::Float);
  CHECK(s.arguments[6].type.base == BaseKind::Str);
  CHECK(s.arguments[7].type.str() == "ScalarType?");
  CHECK(s.arguments[8].type.str() == "Device?");
  CHECK(s.arguments[9].type.base == BaseKind::Scalar);
  CHECK(s.arguments[10].type.str() == "ScalarType");
}

TEST_CASE("operator names: overload name, in-place convention, C++ name") {
  CHECK(parse_schema("copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)").name.cpp_name() ==
        "copy_");
  CHECK(parse_schema("copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)").name.is_inplace());
  CHECK(parse_schema("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)").name.cpp_name() ==
        "fill__Scalar");
  CHECK(parse_schema("eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
            .name.cpp_name() == "eq_Tensor_out");
  CHECK_FALSE(
      parse_schema("add.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)").name.is_inplace());
}

TEST_CASE("returns: one bare, several in parentheses, none") {
  CHECK(parse_schema("f(Tensor self) -> Tensor").str() == "f(Tensor self) -> Tensor");
  CHECK(parse_schema("f(Tensor self) -> (Tensor, Tensor)").returns.size() == 2);
  CHECK(parse_schema("f(Tensor self) -> ()").returns.empty());
  CHECK(parse_schema("f(Tensor self) -> ()").str() == "f(Tensor self) -> ()");
  CHECK(parse_schema("f(Tensor self) -> (Tensor out)").str() == "f(Tensor self) -> (Tensor out)");
  CHECK(parse_schema("f() -> Tensor").arguments.empty());
}

TEST_CASE("defaults of every kind are accepted and kept as written") {
  const FunctionSchema s = parse_schema(
      "f(Tensor self, Scalar a=1, Scalar b=-2.5, int c=0, int[] d=[], int[2] e=[0, 1], "
      "int[2] f=1, bool g=True, float h=1e-05, str i='none', int? j=None, Tensor? k=None, "
      "ScalarType? l=None) -> Tensor");
  CHECK(s.arguments[1].default_value == "1");
  CHECK(s.arguments[2].default_value == "-2.5");
  CHECK(s.arguments[5].default_value == "[0, 1]");
  CHECK(s.arguments[9].default_value == "'none'");
  CHECK(s.arguments[12].default_value == "None");
}

TEST_CASE("a malformed schema says what was expected at which column") {
  // Columns count from 1 within the schema string.
  CHECK(syntax_error_of("add.out(Tensor self -> Tensor") ==
        "column 21: expected ',' or ')' after an argument, found '-'");
  CHECK(syntax_error_of("add.out(Tensor self, Tensor other") ==
        "column 34: expected ',' or ')' after an argument, found the end of the schema");
  CHECK(syntax_error_of("add.out Tensor self) -> Tensor") ==
        "column 9: expected '(' after the operator name, found 'Tensor'");
  CHECK(syntax_error_of("add(Tensor self)") ==
        "column 17: expected '->' and the return types after the argument list, found the end "
        "of the schema");
  CHECK(syntax_error_of("add(Tensor self) -> Tensor)") ==
        "column 27: expected the end of the schema after the return types, found ')'");
  CHECK(syntax_error_of("add(Tensor self) -> Tensor result") ==
        "column 21: a named return must be written in parentheses: '(Tensor name)'");
  CHECK(syntax_error_of("add(Tensor) -> Tensor") ==
        "column 11: expected an argument name after the type, found ')'");
  CHECK(syntax_error_of(".out(Tensor self) -> Tensor") ==
        "column 1: expected an operator name, found '.'");
}

TEST_CASE("an unknown or unsupported type is named, with the types that exist") {
  CHECK(syntax_error_of("add(Tensor self, Tensr other) -> Tensor") ==
        "column 18: unknown type 'Tensr' (Backplane types: Tensor, Tensor?, Tensor[], Scalar, "
        "int, int?, int[], int[N], int[]?, int[N]?, bool, float, float?, str, ScalarType, "
        "ScalarType?, Device?)");
  CHECK(syntax_error_of("f(float[] xs) -> Tensor") ==
        "column 3: type 'float[]' is not supported (Backplane types: Tensor, Tensor?, Tensor[], "
        "Scalar, int, int?, int[], int[N], int[]?, int[N]?, bool, float, float?, str, "
        "ScalarType, ScalarType?, Device?)");
  CHECK(syntax_error_of("f(Tensor self) -> int")
            .starts_with("column 19: return type 'int' is not supported: ops return Tensor or a "
                         "tuple of Tensors"));
}

TEST_CASE("a bad default names the argument and what its type accepts") {
  CHECK(syntax_error_of("f(Tensor self, bool keepdim=0) -> Tensor") ==
        "column 29: bad default '0' for 'bool keepdim': expected True or False");
  CHECK(syntax_error_of("f(Tensor self, int dim=None) -> Tensor") ==
        "column 24: bad default 'None' for 'int dim': only an optional type ('int?') may "
        "default to None");
  CHECK(syntax_error_of("f(Tensor self, int[] dims=[0, x]) -> Tensor") ==
        "column 27: bad default '[0, x]' for 'int[] dims': expected a list of integers such as "
        "[] or [0, 1]");
  CHECK(syntax_error_of("f(Tensor self, str mode=none) -> Tensor") ==
        "column 25: bad default 'none' for 'str mode': expected a quoted string such as 'none'");
  CHECK(syntax_error_of("f(Tensor self, float eps=1e) -> Tensor") ==
        "column 26: bad default '1e' for 'float eps': expected a number");
  CHECK(syntax_error_of("f(Tensor self, Tensor other=1) -> Tensor") ==
        "column 29: bad default '1' for 'Tensor other': a Tensor argument can only default to "
        "None (as 'Tensor?')");
  CHECK(syntax_error_of("f(Tensor self, ScalarType dtype=Float) -> Tensor") ==
        "column 33: bad default 'Float' for 'ScalarType dtype': a ScalarType has no default; "
        "write 'ScalarType? name=None'");
  CHECK(syntax_error_of("f(Tensor self, int dim=) -> Tensor") ==
        "column 24: expected a default value after '=', found ')'");
}

TEST_CASE("alias annotations belong on plain Tensors only") {
  CHECK(syntax_error_of("f(int(a) x) -> Tensor") ==
        "column 6: alias annotation '(a)' on type 'int': only Tensor arguments can alias");
  CHECK(syntax_error_of("f(Tensor(a!)? x) -> Tensor") ==
        "column 3: alias annotation on 'Tensor?': only a plain Tensor can carry one");
  CHECK(syntax_error_of("f(Tensor(A!) x) -> Tensor") ==
        "column 10: expected an alias set name such as 'a' in the annotation, found 'A'");
  CHECK(syntax_error_of("f(Tensor(a!x) x) -> Tensor") ==
        "column 12: expected ')' closing the alias annotation, found 'x'");
}

TEST_CASE("argument names are unique and the keyword-only marker appears once") {
  CHECK(syntax_error_of("f(Tensor self, int self) -> Tensor") ==
        "column 20: argument 'self' appears twice");
  CHECK(syntax_error_of("f(Tensor self, *, int a, *, int b) -> Tensor") ==
        "column 26: a second '*' marker; keyword-only arguments start once");
}
