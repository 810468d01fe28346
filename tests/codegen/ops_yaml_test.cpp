// Reading ops.yaml: entries, their keys and defaults, and the rules that make them consistent.
// Every mistake is reported as `file:line:col: error: message`.
#include "test_support.h"
#include "yaml_loader.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

NativeFunctions parse(const std::string& yaml) { return parse_native_functions(yaml, "ops.yaml"); }

std::string error_in(const std::string& yaml) {
  return error_of([&] { parse(yaml); });
}

constexpr const char* kAddOut =
    "- func: add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
    "  structured: true\n"
    "  dtypes: all\n";

}  // namespace

TEST_CASE("the real ops.yaml loads and validates") {
  const NativeFunctions ops = load_native_functions(ops_yaml_path().string());
  CHECK(ops.functions.size() > 50);
  CHECK(ops.kernel_ops().size() == 56);

  const NativeFunction* add = ops.find("add.Tensor");
  REQUIRE(add);
  CHECK(add->variants.function);
  CHECK(add->variants.method);
  CHECK(add->structured_delegate->str() == "add.out");

  const NativeFunction* add_out = ops.find("add.out");
  REQUIRE(add_out);
  CHECK(add_out->structured);
  CHECK(add_out->meta == "binary_with_alpha");
  CHECK(add_out->variants.function);  // the default
  CHECK_FALSE(add_out->variants.method);

  CHECK(ops.find("where.self_out")->meta == "where_self_out");  // default: the C++ name
  CHECK(add_out->dtypes == DTypeClass::All);
  CHECK(add_out->dtypes_of == "out");
  CHECK(ops.find("sub.out")->dtypes == DTypeClass::AllButBool);
  CHECK(ops.find("gelu.out")->dtypes == DTypeClass::Floating);
  CHECK(ops.find("eq.Tensor_out")->dtypes_of == "self");
  CHECK(ops.find("copy_")->dtypes_of == "self");  // the written self
  CHECK(ops.find("matmul")->composite);
  CHECK(ops.find("add_.Tensor")->is_method_only());
}

TEST_CASE("entries keep their position for messages") {
  const NativeFunctions ops = parse(std::string("# comment\n") + kAddOut);
  CHECK(ops.functions[0].location.str() == "ops.yaml:2:9");
}

TEST_CASE("malformed YAML is reported where the parser stopped") {
  CHECK(error_in("- func: [add.out(Tensor self) -> Tensor\n") ==
        "ops.yaml:2:1: error: malformed YAML: end of sequence flow not found");
  CHECK(error_in("func: x\n") ==
        "ops.yaml:1:1: error: expected a list of entries, each '- func: <schema>'");
}

TEST_CASE("unknown keys and variants are rejected, with a suggestion") {
  CHECK(error_in("- func: f(Tensor self) -> Tensor\n  composite: true\n  strucured: true\n") ==
        "ops.yaml:3:3: error: unknown key 'strucured' (known keys: func, variants, structured, "
        "meta, structured_delegate, composite, pointwise, dtypes, dtypes_of); did you mean "
        "'structured'?");
  CHECK(
      error_in(
          "- func: f(Tensor self) -> Tensor\n  composite: true\n  variants: function, methods\n") ==
      "ops.yaml:3:23: error: unknown variant 'methods' (expected 'function', 'method' or "
      "'function, method')");
  CHECK(error_in("- func: f(Tensor self) -> Tensor\n  composite: true\n  composite: false\n") ==
        "ops.yaml:3:3: error: duplicate key 'composite' (first at line 2)");
  CHECK(error_in("- composite: true\n") == "ops.yaml:1:3: error: entry has no 'func' key");
  CHECK(error_in("- func: f(Tensor self) -> Tensor\n  composite: yes please\n") ==
        "ops.yaml:2:14: error: 'composite' must be true or false, not 'yes please'");
}

TEST_CASE("a bad schema is reported at its column in the file") {
  CHECK(error_in("- func: add(Tensor self, Tensr other) -> Tensor\n  composite: true\n")
            .starts_with("ops.yaml:1:26: error: bad schema: unknown type 'Tensr'"));
}

TEST_CASE("every entry is exactly one of structured, a structured delegate, or composite") {
  CHECK(error_in("- func: f(Tensor self) -> Tensor\n") ==
        "ops.yaml:1:9: error: 'f' must be exactly one of 'structured: true', "
        "'structured_delegate: <op>' or 'composite: true'");
  CHECK(error_in("- func: f(Tensor self) -> Tensor\n  composite: true\n  meta: unary\n") ==
        "ops.yaml:3:9: error: 'meta' applies only to entries with 'structured: true'");
}

TEST_CASE("'pointwise' marks structured ops only, with a boolean") {
  CHECK(error_in("- func: f(Tensor self) -> Tensor\n  composite: true\n  pointwise: true\n") ==
        "ops.yaml:3:14: error: 'pointwise' applies only to entries with 'structured: true' (their "
        "delegates and in-place overloads take it from there)");
  CHECK(error_in(std::string(kAddOut) + "  pointwise: maybe\n").find("'pointwise'") !=
        std::string::npos);
}

TEST_CASE("operator names are unique") {
  CHECK(
      error_in(
          std::string(kAddOut) +
          "- func: add.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: true\n") ==
      "ops.yaml:4:9: error: duplicate operator 'add.out' (first defined at line 1)");
}

TEST_CASE("a structured_delegate names a structured op with the same inputs") {
  SUBCASE("an op that does not exist, with a suggestion") {
    CHECK(
        error_in(
            std::string(kAddOut) +
            "- func: add(Tensor self, Tensor other) -> Tensor\n  structured_delegate: add.ot\n") ==
        "ops.yaml:5:24: error: structured_delegate 'add.ot' names no op in this file; did you "
        "mean 'add.out'?");
  }
  SUBCASE("an op that is not structured") {
    CHECK(error_in("- func: g(Tensor self) -> Tensor\n  composite: true\n"
                   "- func: f(Tensor self) -> Tensor\n  structured_delegate: g\n") ==
          "ops.yaml:4:24: error: structured_delegate 'g' is not a structured op (it has no "
          "'structured: true')");
  }
  SUBCASE("arguments that differ from the structured op's non-out arguments") {
    CHECK(
        error_in(
            std::string(kAddOut) +
            "- func: add(Tensor self, Scalar other) -> Tensor\n  structured_delegate: add.out\n") ==
        "ops.yaml:4:9: error: the arguments of 'add' do not match the non-out arguments of its "
        "structured op 'add.out': argument 2 is 'Scalar other' here but 'Tensor other' there");
    CHECK(error_in(std::string(kAddOut) +
                   "- func: add(Tensor self) -> Tensor\n  structured_delegate: add.out\n") ==
          "ops.yaml:4:9: error: the arguments of 'add' do not match the non-out arguments of its "
          "structured op 'add.out': 1 arguments here, 2 there");
  }
  SUBCASE("a different number of results") {
    CHECK(error_in(std::string(kAddOut) + "- func: add(Tensor self, Tensor other) -> (Tensor, "
                                          "Tensor)\n  structured_delegate: add.out\n") ==
          "ops.yaml:4:9: error: 'add' returns 2 tensor(s) but its structured op 'add.out' has 1 "
          "out= argument(s)");
  }
  SUBCASE("in-place delegates pass: self is the output") {
    CHECK(error_in(std::string(kAddOut) +
                   "- func: add_(Tensor(a!) self, Tensor other) -> Tensor(a!)\n  variants: "
                   "method\n  structured_delegate: add.out\n") == "<no error>");
  }
}

TEST_CASE("ops sharing a meta function have the same argument types") {
  CHECK(error_in("- func: a.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: "
                 "true\n  dtypes: all\n  meta: unary\n"
                 "- func: b.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)\n  "
                 "structured: true\n  dtypes: all\n  meta: unary\n") ==
        "ops.yaml:8:9: error: meta function 'unary' is shared by 'a.out' (Tensor) with 1 "
        "output(s) and 'b.out' (Tensor, int) with 1 output(s); every user of a meta function "
        "must have the same argument types");
}

TEST_CASE("kernels cannot take a Device, so a structured op cannot have one") {
  CHECK(error_in("- func: arange.out(Scalar end, *, Device? device=None, Tensor(a!) out) -> "
                 "Tensor(a!)\n  structured: true\n") ==
        "ops.yaml:1:9: error: structured op 'arange.out' has argument 'Device? device': kernels "
        "cannot take a Device? (make the op composite instead)");
  CHECK(error_in(
            "- func: arange(Scalar end, *, Device? device=None) -> Tensor\n  composite: true\n") ==
        "<no error>");
}

TEST_CASE("a structured op writes its out= arguments or self") {
  CHECK(error_in("- func: f(Tensor self) -> Tensor\n  structured: true\n") ==
        "ops.yaml:1:9: error: structured op 'f' writes no tensor: it needs out= arguments "
        "(Tensor(a!) after '*') or a written 'Tensor(a!) self'");
}

TEST_CASE("the method variant needs a Tensor named self as the receiver") {
  CHECK(error_in("- func: f(Tensor input) -> Tensor\n  variants: method\n  composite: true\n") ==
        "ops.yaml:1:9: error: 'f' has the 'method' variant but no Tensor argument named 'self' "
        "to be the receiver");
}

TEST_CASE("an aliased return aliases an argument") {
  CHECK(error_in("- func: f(Tensor self) -> Tensor(a!)\n  composite: true\n") ==
        "ops.yaml:1:9: error: return 'Tensor(a!)' of 'f' aliases no argument");
}

TEST_CASE("a structured op declares the dtypes its kernel takes, and in which argument") {
  SUBCASE("a class, in the first written tensor unless dtypes_of names another") {
    const NativeFunctions ops =
        parse(std::string(kAddOut) +
              "- func: eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
              "  structured: true\n  dtypes: all_but_bool\n  dtypes_of: self\n"
              "- func: fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)\n"
              "  structured: true\n  dtypes: floating\n");
    CHECK(ops.functions[0].dtypes == DTypeClass::All);
    CHECK(ops.functions[0].dtypes_of == "out");
    CHECK(ops.functions[1].dtypes == DTypeClass::AllButBool);
    CHECK(ops.functions[1].dtypes_of == "self");
    CHECK(ops.functions[2].dtypes == DTypeClass::Floating);
    CHECK(ops.functions[2].dtypes_of == "self");
  }
  SUBCASE("no dtypes") {
    CHECK(error_in("- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
                   "  structured: true\n") ==
          "ops.yaml:1:9: error: structured op 'neg.out' has no 'dtypes': add 'dtypes: all', "
          "'dtypes: all_but_bool' or 'dtypes: floating', the dtypes its kernel computes on");
  }
  SUBCASE("an unknown class, with the known ones and a suggestion") {
    CHECK(error_in("- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
                   "  structured: true\n  dtypes: floatin\n") ==
          "ops.yaml:3:11: error: unknown dtype class 'floatin' (expected 'all', 'all_but_bool' "
          "or 'floating'); did you mean 'floating'?");
    CHECK(error_in("- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
                   "  structured: true\n  dtypes: integral\n") ==
          "ops.yaml:3:11: error: unknown dtype class 'integral' (expected 'all', "
          "'all_but_bool' or 'floating')");
  }
  SUBCASE("dtypes_of naming no argument, with the Tensor arguments and a suggestion") {
    CHECK(error_in(std::string(kAddOut) + "  dtypes_of: slf\n") ==
          "ops.yaml:4:14: error: dtypes_of 'slf' names no argument of 'add.out' (its Tensor "
          "arguments: self, other, out); did you mean 'self'?");
  }
  SUBCASE("dtypes_of naming an argument that is not a Tensor") {
    CHECK(error_in("- func: sum.out(Tensor self, int dim, Tensor? weight, *, Tensor(a!) out) -> "
                   "Tensor(a!)\n  structured: true\n  dtypes: all\n  dtypes_of: dim\n") ==
          "ops.yaml:4:14: error: dtypes_of 'dim' names the argument 'int dim' of 'sum.out'; it "
          "must name a Tensor argument: self, out");
    CHECK(error_in("- func: sum.out(Tensor self, int dim, Tensor? weight, *, Tensor(a!) out) -> "
                   "Tensor(a!)\n  structured: true\n  dtypes: all\n  dtypes_of: weight\n") ==
          "ops.yaml:4:14: error: dtypes_of 'weight' names the argument 'Tensor? weight' of "
          "'sum.out'; it must name a Tensor argument: self, out");
  }
  SUBCASE("dtypes and dtypes_of only on structured entries") {
    CHECK(error_in("- func: f(Tensor self) -> Tensor\n  composite: true\n  dtypes: all\n") ==
          "ops.yaml:3:11: error: 'dtypes' applies only to entries with 'structured: true' (it "
          "states what their kernel takes; delegates and composites have no kernel)");
    CHECK(error_in("- func: f(Tensor self) -> Tensor\n  composite: true\n  dtypes_of: self\n") ==
          "ops.yaml:3:14: error: 'dtypes_of' applies only to entries with 'structured: true'");
  }
}
