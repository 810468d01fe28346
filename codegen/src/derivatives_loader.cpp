#include "derivatives_loader.h"

#include <fmt/format.h>

#include <map>

#include "cpp_types.h"
#include "spelling.h"
#include "yaml_util.h"

namespace bp::codegen {

namespace {

constexpr const char* kNameKey = "name";
constexpr const char* kOutputDifferentiabilityKey = "output_differentiability";

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// Every run of whitespace as one space: a formula may be folded over several YAML lines.
std::string one_line(const std::string& text) {
  std::string result;
  bool in_space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      in_space = true;
      continue;
    }
    if (in_space && !result.empty()) result += ' ';
    in_space = false;
    result += c;
  }
  return result;
}

std::vector<std::string> argument_names(const FunctionSchema& schema, bool differentiable_only) {
  std::vector<std::string> names;
  for (const Argument& a : schema.arguments) {
    if (!differentiable_only || is_differentiable_argument(a)) names.push_back(a.name);
  }
  return names;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const std::string& name : names) quoted.push_back("'" + name + "'");
  return comma_list(quoted);
}

// The overload of the same op that takes the same inputs and returns fresh outputs: where an
// out= or in-place overload's formulas belong.
const NativeFunction* functional_overload(const NativeFunction& f, const NativeFunctions& all) {
  std::string base = f.func.name.name;
  if (f.func.name.is_inplace()) base.pop_back();
  std::vector<std::string> inputs;
  for (const Argument* a : f.func.non_out_arguments()) inputs.push_back(a->name);
  for (const NativeFunction& candidate : all.functions) {
    if (candidate.func.name.name != base || candidate.func.is_out_fn()) continue;
    if (argument_names(candidate.func, false) == inputs) return &candidate;
  }
  return nullptr;
}

class EntryReader {
 public:
  EntryReader(const YAML::Node& entry, const std::string& path, const NativeFunctions& functions)
      : entry_(entry), path_(path), functions_(functions) {}

  DerivativeEntry read() {
    if (!entry_.IsMap()) {
      throw CodegenError(location_of(path_, entry_),
                         "each entry must be a mapping that starts with 'name: <op>'");
    }
    check_unique_keys();
    const YAML::Node name = entry_[kNameKey];
    if (!name) throw CodegenError(location_of(path_, entry_), "entry has no 'name' key");
    result_.location = location_of(path_, name);
    result_.function = &find_function(name);
    const FunctionSchema& schema = result_.function->func;
    result_.output_differentiability.assign(schema.returns.size(), true);
    bool differentiability_given = false;
    for (const auto& key_value : entry_) {
      const std::string key = key_value.first.Scalar();
      if (key == kNameKey) continue;
      if (key == kOutputDifferentiabilityKey) {
        read_output_differentiability(key_value.second);
        differentiability_given = true;
      } else {
        read_formula(key_value.first, key_value.second);
      }
    }
    check_has_gradient(differentiability_given);
    return std::move(result_);
  }

 private:
  void check_unique_keys() const {
    std::map<std::string, int> first_line;
    for (const auto& key_value : entry_) {
      const std::string key = scalar_text(key_value.first, path_, "a key");
      const SourceLocation location = location_of(path_, key_value.first);
      auto [it, inserted] = first_line.emplace(key, location.line);
      if (!inserted) {
        throw CodegenError(location,
                           fmt::format("duplicate key '{}' (first at line {})", key, it->second));
      }
    }
  }

  const NativeFunction& find_function(const YAML::Node& name_node) const {
    const std::string name = scalar_text(name_node, path_, "'name'");
    const SourceLocation location = location_of(path_, name_node);
    const NativeFunction* f = functions_.find(name);
    if (!f) {
      std::vector<std::string> candidates;
      for (const NativeFunction& candidate : functions_.functions) {
        candidates.push_back(candidate.func.name.str());
      }
      throw CodegenError(location, fmt::format("unknown op '{}': ops.yaml has no such "
                                               "overload{}",
                                               name, did_you_mean(name, candidates)));
    }
    const bool is_out = f->func.is_out_fn();
    if (is_out || f->func.name.is_inplace()) {
      const NativeFunction* functional = functional_overload(*f, functions_);
      throw CodegenError(
          location,
          fmt::format("'{}' is an {} overload: formulas belong to the functional overload{}, "
                      "which records the graph ({} overloads refuse inputs that need a gradient)",
                      name, is_out ? "out=" : "in-place",
                      functional ? " '" + functional->func.name.str() + "'" : "",
                      is_out ? "out=" : "in-place"));
    }
    return *f;
  }

  void read_output_differentiability(const YAML::Node& node) {
    const FunctionSchema& schema = result_.function->func;
    const size_t count = schema.returns.size();
    const std::string expected = fmt::format(
        "output_differentiability of '{}' must be a list of {} boolean{} "
        "([True, False]), one per output",
        schema.name.str(), count, count == 1 ? "" : "s");
    if (!node.IsSequence()) throw CodegenError(location_of(path_, node), expected);
    if (node.size() != count) {
      throw CodegenError(location_of(path_, node),
                         fmt::format("{}; it lists {}", expected, node.size()));
    }
    for (size_t i = 0; i < count; ++i) {
      if (!node[i].IsScalar()) throw CodegenError(location_of(path_, node[i]), expected);
      result_.output_differentiability[i] =
          scalar_bool(node[i], path_, "each element of output_differentiability");
    }
  }

  // `self` or `input, weight, bias`: the arguments a formula is for.
  std::vector<const Argument*> read_formula_inputs(const YAML::Node& key_node) {
    const std::string key = key_node.Scalar();
    const SourceLocation key_location = location_of(path_, key_node);
    std::vector<const Argument*> inputs;
    size_t start = 0;
    while (start <= key.size()) {
      size_t comma = key.find(',', start);
      if (comma == std::string::npos) comma = key.size();
      const std::string name = trimmed(key.substr(start, comma - start));
      const SourceLocation location =
          key_location.shifted(static_cast<int>(start + key.substr(start).find_first_not_of(' ')));
      inputs.push_back(&find_input(name, location, key_location));
      start = comma + 1;
    }
    if (inputs.size() > 1) {
      for (const Argument* input : inputs) {
        if (input->type.is_list) {
          throw CodegenError(key_location,
                             fmt::format("'{}' has type {}: its formula gives one gradient per "
                                         "element: give it a formula of its own",
                                         input->name, input->type.str()));
        }
      }
    }
    return inputs;
  }

  const Argument& find_input(const std::string& name, const SourceLocation& location,
                             const SourceLocation& key_location) {
    const FunctionSchema& schema = result_.function->func;
    const Argument* argument = schema.find_argument(name);
    if (!argument) {
      std::vector<std::string> candidates = argument_names(schema, true);
      candidates.push_back(kNameKey);
      candidates.push_back(kOutputDifferentiabilityKey);
      throw CodegenError(location,
                         fmt::format("unknown key '{}': neither an argument of '{}' (its "
                                     "differentiable arguments: {}) nor '{}' or '{}'{}",
                                     name, schema.name.str(),
                                     quoted_list(argument_names(schema, true)), kNameKey,
                                     kOutputDifferentiabilityKey, did_you_mean(name, candidates)));
    }
    if (!is_differentiable_argument(*argument)) {
      throw CodegenError(location, fmt::format("'{}' of '{}' has type {}{}, which has no gradient: "
                                               "formulas are for the Tensor, Tensor? and Tensor[] "
                                               "arguments that the op reads ({})",
                                               name, schema.name.str(), argument->type.str(),
                                               argument->is_write() ? " and the op writes it" : "",
                                               quoted_list(argument_names(schema, true))));
    }
    auto [it, inserted] = formula_lines_.emplace(name, key_location.line);
    if (!inserted) {
      throw CodegenError(location, fmt::format("'{}' has a formula already (line {}): one "
                                               "formula per argument",
                                               name, it->second));
    }
    return *argument;
  }

  void read_formula(const YAML::Node& key_node, const YAML::Node& value) {
    DerivativeFormula formula;
    formula.location = location_of(path_, key_node);
    formula.inputs = read_formula_inputs(key_node);
    const std::string what = fmt::format("the formula for '{}'", key_node.Scalar());
    formula.expression = one_line(scalar_text(value, path_, what));
    if (formula.expression.empty()) {
      throw CodegenError(location_of(path_, value), fmt::format("{} is empty", what));
    }
    formula.names_read = formula_identifiers(formula.expression);
    check_names_read(formula, location_of(path_, value), what);
    result_.formulas.push_back(std::move(formula));
  }

  void check_names_read(const DerivativeFormula& formula, const SourceLocation& location,
                        const std::string& what) const {
    const FunctionSchema& schema = result_.function->func;
    bool reads_gradient = false;
    for (const std::string& name : formula.names_read) {
      reads_gradient = reads_gradient || name == "grad" || name == "grads";
      const bool names_an_output = name.starts_with("result") &&
                                   name.find_first_not_of("0123456789", 6) == std::string::npos;
      if (names_an_output && output_index(schema, name) < 0) {
        throw CodegenError(
            location,
            fmt::format("{} reads '{}', but '{}' has {} output{}: a formula reads {}", what, name,
                        schema.name.str(), schema.returns.size(),
                        schema.returns.size() == 1 ? "" : "s",
                        schema.returns.size() == 1 ? "'result'" : "'result0', 'result1', ..."));
      }
      if (name.ends_with("_sizes")) {
        const Argument* sized = schema.find_argument(name.substr(0, name.size() - 6));
        if (sized && (!sized->type.is_tensor_like() || sized->type.is_optional)) {
          throw CodegenError(location,
                             fmt::format("{} reads '{}', but '{}' has type {}: only the sizes of a "
                                         "Tensor or Tensor[] argument are saved",
                                         what, name, sized->name, sized->type.str()));
        }
      }
    }
    if (!reads_gradient) {
      throw CodegenError(location, fmt::format("{} reads neither 'grad' nor 'grads': a gradient "
                                               "formula computes from the outputs' gradients",
                                               what));
    }
  }

  void check_has_gradient(bool differentiability_given) const {
    const std::string name = result_.function->func.name.str();
    bool any_differentiable = false;
    for (const bool differentiable : result_.output_differentiability) {
      any_differentiable = any_differentiable || differentiable;
    }
    if (result_.formulas.empty() && (any_differentiable || !differentiability_given)) {
      throw CodegenError(result_.location,
                         fmt::format("'{}' has no formulas: give one per differentiable input "
                                     "('self: <expression>'), or 'output_differentiability: "
                                     "[False]' for an op whose outputs have no gradient",
                                     name));
    }
    if (!result_.formulas.empty() && !any_differentiable) {
      throw CodegenError(result_.location,
                         fmt::format("'{}' has formulas, but output_differentiability says no "
                                     "output has a gradient: they would never run",
                                     name));
    }
  }

  const YAML::Node& entry_;
  const std::string& path_;
  const NativeFunctions& functions_;
  DerivativeEntry result_;
  std::map<std::string, int> formula_lines_;  // argument -> line of its formula
};

}  // namespace

Derivatives parse_derivatives(const std::string& yaml_text, const std::string& path,
                              const NativeFunctions& functions) {
  const YAML::Node root = load_yaml(yaml_text, path);
  Derivatives derivatives;
  derivatives.path = path;
  if (root.IsNull()) return derivatives;
  if (!root.IsSequence()) {
    throw CodegenError(location_of(path, root), "expected a list of entries, each '- name: <op>'");
  }
  std::map<const NativeFunction*, int> first_line;
  for (const YAML::Node& node : root) {
    DerivativeEntry entry = EntryReader(node, path, functions).read();
    auto [it, inserted] = first_line.emplace(entry.function, entry.location.line);
    if (!inserted) {
      throw CodegenError(entry.location, fmt::format("duplicate entry '{}' (first at line {})",
                                                     entry.function->func.name.str(), it->second));
    }
    derivatives.entries.push_back(std::move(entry));
  }
  return derivatives;
}

Derivatives load_derivatives(const std::string& path, const NativeFunctions& functions) {
  return parse_derivatives(read_text_file(path), path, functions);
}

}  // namespace bp::codegen
