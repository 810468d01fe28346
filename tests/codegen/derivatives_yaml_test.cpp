// Reading derivatives.yaml against ops.yaml: its entries, what each formula reads, and every
// mistake reported as `file:line:col: error: message`, with a suggestion for a misspelling.
#include "derivatives_loader.h"
#include "gen_autograd.h"
#include "test_support.h"
#include "yaml_loader.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

const NativeFunctions& small_ops() {
  static const NativeFunctions functions =
      load_native_functions((golden_dir() / "ops_small.yaml").string());
  return functions;
}

Derivatives parse(const std::string& yaml) {
  return parse_derivatives(yaml, "derivatives.yaml", small_ops());
}

std::string error_in(const std::string& yaml) {
  return error_of([&] { parse(yaml); });
}

bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

}  // namespace

TEST_CASE("the real derivatives.yaml loads against the real ops.yaml") {
  const NativeFunctions ops = load_native_functions(ops_yaml_path().string());
  const Derivatives derivatives = load_derivatives(derivatives_yaml_path().string(), ops);
  const DerivativeEntry* mul = derivatives.find(*ops.find("mul.Tensor"));
  REQUIRE(mul);
  REQUIRE(mul->formulas.size() == 2);
  CHECK(mul->formulas[0].inputs[0]->name == "self");
  CHECK(mul->formulas[0].expression == "grad * other");
  CHECK(mul->output_differentiability == std::vector<bool>{true});
  CHECK(derivatives.find(*ops.find("max.dim"))->output_differentiability ==
        std::vector<bool>{true, false});
  CHECK_FALSE(derivatives.find(*ops.find("eq.Tensor"))->records());
  CHECK(derivatives.find(*ops.find("relu")) == nullptr);
}

TEST_CASE("a formula reads the identifiers outside literals, member names and numbers") {
  CHECK(formula_identifiers("max_dim_backward(grad, dim, indices, self_sizes, keepdim)") ==
        std::vector<std::string>{"max_dim_backward", "grad", "dim", "indices", "self_sizes",
                                 "keepdim"});
  CHECK(formula_identifiers("grad * other.transpose(0, 1) + other->x + std::abs(self)") ==
        std::vector<std::string>{"grad", "other", "std", "self"});
  CHECK(formula_identifiers("f(grads[1], \"self\", 'a', 1e-5, 2.5f, self)") ==
        std::vector<std::string>{"f", "grads", "self"});
}

TEST_CASE("a formula folded over several lines is one expression") {
  const Derivatives d = parse("- name: neg\n  self: >-\n    -grad\n    * 2\n");
  CHECK(d.entries[0].formulas[0].expression == "-grad * 2");
}

TEST_CASE("a misspelled op is reported with a suggestion") {
  CHECK(error_in("- name: ad.Tensor\n  self: grad\n") ==
        "derivatives.yaml:1:9: error: unknown op 'ad.Tensor': ops.yaml has no such overload; did "
        "you mean 'add.Tensor'?");
  CHECK(error_in("- self: grad\n") == "derivatives.yaml:1:3: error: entry has no 'name' key");
}

TEST_CASE("out= and in-place overloads get no formulas: their functional overload does") {
  CHECK(error_in("- name: add.out\n  self: grad\n") ==
        "derivatives.yaml:1:9: error: 'add.out' is an out= overload: formulas belong to the "
        "functional overload 'add.Tensor', which records the graph (out= overloads refuse "
        "inputs that need a gradient)");
  CHECK(error_in("- name: add_.Tensor\n  self: grad\n") ==
        "derivatives.yaml:1:9: error: 'add_.Tensor' is an in-place overload: formulas belong to "
        "the functional overload 'add.Tensor', which records the graph (in-place overloads "
        "refuse inputs that need a gradient)");
}

TEST_CASE("a key is an argument of the op, 'name' or 'output_differentiability'") {
  CHECK(error_in("- name: add.Tensor\n  self: grad\n  othr: grad\n") ==
        "derivatives.yaml:3:3: error: unknown key 'othr': neither an argument of 'add.Tensor' "
        "(its differentiable arguments: 'self', 'other') nor 'name' or "
        "'output_differentiability'; did you mean 'other'?");
  CHECK(error_in("- name: argmax\n  output_differentiabilty: [False]\n") ==
        "derivatives.yaml:2:3: error: unknown key 'output_differentiabilty': neither an "
        "argument of 'argmax' (its differentiable arguments: 'self') nor 'name' or "
        "'output_differentiability'; did you mean 'output_differentiability'?");
  CHECK(error_in("- name: native_layer_norm\n  input, wieght: grad\n") ==
        "derivatives.yaml:2:10: error: unknown key 'wieght': neither an argument of "
        "'native_layer_norm' (its differentiable arguments: 'input', 'weight', 'bias') nor "
        "'name' or 'output_differentiability'; did you mean 'weight'?");
}

TEST_CASE("formulas are for the tensors an op reads") {
  CHECK(error_in("- name: add.Tensor\n  alpha: grad\n") ==
        "derivatives.yaml:2:3: error: 'alpha' of 'add.Tensor' has type Scalar, which has no "
        "gradient: formulas are for the Tensor, Tensor? and Tensor[] arguments that the op "
        "reads ('self', 'other')");
}

TEST_CASE("each argument has one formula, and each op one entry") {
  CHECK(error_in("- name: add.Tensor\n  self: grad\n  other, self: grad\n") ==
        "derivatives.yaml:3:10: error: 'self' has a formula already (line 2): one formula per "
        "argument");
  CHECK(error_in("- name: neg\n  self: grad\n  self: -grad\n") ==
        "derivatives.yaml:3:3: error: duplicate key 'self' (first at line 2)");
  CHECK(error_in("- name: neg\n  self: -grad\n- name: neg\n  self: grad\n") ==
        "derivatives.yaml:3:9: error: duplicate entry 'neg' (first at line 1)");
}

TEST_CASE("output_differentiability lists one boolean per output") {
  CHECK(error_in("- name: max.dim\n  self: grad\n  output_differentiability: [True]\n") ==
        "derivatives.yaml:3:29: error: output_differentiability of 'max.dim' must be a list of "
        "2 booleans ([True, False]), one per output; it lists 1");
  CHECK(error_in("- name: argmax\n  output_differentiability: False\n") ==
        "derivatives.yaml:2:29: error: output_differentiability of 'argmax' must be a list of 1 "
        "boolean ([True, False]), one per output");
  CHECK(error_in("- name: argmax\n  output_differentiability: [no]\n") ==
        "derivatives.yaml:2:30: error: each element of output_differentiability must be true "
        "or false, not 'no'");
}

TEST_CASE("an entry gives formulas, or says that no output has a gradient") {
  CHECK(error_in("- name: neg\n") ==
        "derivatives.yaml:1:9: error: 'neg' has no formulas: give one per differentiable input "
        "('self: <expression>'), or 'output_differentiability: [False]' for an op whose "
        "outputs have no gradient");
  CHECK(error_in("- name: max.dim\n  output_differentiability: [True, False]\n")
            .starts_with("derivatives.yaml:1:9: error: 'max.dim' has no formulas"));
  CHECK(error_in("- name: neg\n  self: grad\n  output_differentiability: [False]\n") ==
        "derivatives.yaml:1:9: error: 'neg' has formulas, but output_differentiability says no "
        "output has a gradient: they would never run");
}

TEST_CASE("a formula reads the gradient, outputs that exist, and sizes of tensors") {
  CHECK(error_in("- name: neg\n  self: self * 2\n") ==
        "derivatives.yaml:2:9: error: the formula for 'self' reads neither 'grad' nor 'grads': "
        "a gradient formula computes from the outputs' gradients");
  CHECK(error_in("- name: neg\n  self: \"\"\n") ==
        "derivatives.yaml:2:9: error: the formula for 'self' is empty");
  CHECK(error_in("- name: neg\n  self: grad * result1\n") ==
        "derivatives.yaml:2:9: error: the formula for 'self' reads 'result1', but 'neg' has 1 "
        "output: a formula reads 'result'");
  CHECK(error_in("- name: max.dim\n  self: grad * result\n") ==
        "derivatives.yaml:2:9: error: the formula for 'self' reads 'result', but 'max.dim' has "
        "2 outputs: a formula reads 'result0', 'result1', ...");
  CHECK(error_in("- name: sum.dim_IntList\n  self: grad * dim_sizes\n") ==
        "derivatives.yaml:2:9: error: the formula for 'self' reads 'dim_sizes', but 'dim' has "
        "type int[1]?: only the sizes of a Tensor or Tensor[] argument are saved");
}

TEST_CASE("a Tensor[] argument has a formula of its own") {
  const NativeFunctions ops = parse_native_functions(
      "- func: stack_scaled(Tensor[] tensors, Tensor scale) -> Tensor\n"
      "  composite: true\n",
      "ops.yaml");
  CHECK(error_of([&] {
          parse_derivatives("- name: stack_scaled\n  tensors, scale: f(grad)\n", "derivatives.yaml",
                            ops);
        }) ==
        "derivatives.yaml:2:3: error: 'tensors' has type Tensor[]: its formula gives one "
        "gradient per element: give it a formula of its own");

  SUBCASE("an input after a list finds its edge through the node") {
    const Derivatives d = parse_derivatives(
        "- name: stack_scaled\n  tensors: f(grad, scale)\n  scale: g(grad, tensors_sizes)\n",
        "derivatives.yaml", ops);
    const std::string cpp = generate_autograd_cpp(d);
    CHECK(contains(cpp,
                   "  node->tensors_edge_ = node->next_edges().size();\n"
                   "  node->tensors_count_ = tensors.size();\n"
                   "  node->add_next_edge(tensors);\n"
                   "  node->scale_edge_ = node->next_edges().size();\n"
                   "  node->add_next_edge(scale);\n"));
    CHECK(contains(cpp,
                   "  if (needs_any_input_grad(*node, node->tensors_edge_, node->tensors_count_)) "
                   "{\n    node->scale_ = SavedVariable(scale, false);\n  }\n"));
    CHECK(contains(cpp, "    if (needs_input_grad(scale_edge_)) {\n"));
    CHECK(contains(cpp, "      grad_inputs[scale_edge_] = g(grad, tensors_sizes);\n"));
  }
}

TEST_CASE("the public function's prologue: record, refuse, or just run") {
  const Derivatives d = parse(
      "- name: neg\n  self: -grad\n- name: argmax\n"
      "  output_differentiability: [False]\n");
  auto prologue = [&](const char* name) { return autograd_prologue(*small_ops().find(name), d); };
  CHECK(prologue("neg") == TemplateLines{"if (autograd::detail::needs_recording(self)) "
                                         "[[unlikely]]",
                                         "  return autograd::generated::neg(self);"});
  CHECK(prologue("neg_") ==
        TemplateLines{"autograd::detail::check_not_recorded(\"neg_\", true, self);"});
  CHECK(prologue("argmax").empty());
  CHECK(prologue("where.self") ==
        TemplateLines{"if (autograd::detail::needs_recording(condition, self, other)) "
                      "[[unlikely]]",
                      "  autograd::detail::refuse_no_formula(\"where.self\");"});
  CHECK(prologue("add.Scalar").empty());  // a composite records through the ops it calls
}

TEST_CASE("bad derivatives.yaml: exit 1, the positioned message, and no output at all") {
  TempDir dir;
  const std::string derivatives = dir.file("derivatives.yaml", "- name: mull.Tensor\n");
  const CliResult result = run_codegen({"core", "--ops", ops_yaml_path().string(), "--derivatives",
                                        derivatives, "--public-out", (dir / "public").string(),
                                        "--internal-out", (dir / "internal").string()});
  CHECK(result.status == 1);
  CHECK(result.err == derivatives +
                          ":1:9: error: unknown op 'mull.Tensor': ops.yaml has no such overload; "
                          "did you mean 'mul.Tensor'?\n");
  CHECK(files_under(dir / "public").empty());
  CHECK(files_under(dir / "internal").empty());
  CHECK(run_codegen({"check", "--ops", ops_yaml_path().string(), "--derivatives", derivatives})
            .status == 1);
}
