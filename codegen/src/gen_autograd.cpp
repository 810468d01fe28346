#include "gen_autograd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <utility>

#include "cpp_types.h"
#include "embedded_templates.h"
#include "gen_core.h"
#include "signatures.h"

namespace bp::codegen {

namespace {

// Where an input's gradients go in the node's next edges. Inputs before the first Tensor[]
// have a fixed index; the others, and every list, keep theirs in the node (`<name>_edge_`,
// and `<name>_count_` for a list), set when the op is recorded.
struct EdgeSlot {
  const Argument* argument = nullptr;
  std::optional<size_t> fixed_index;

  bool is_list() const { return argument->type.is_list; }
  std::string edge_member() const { return argument->name + "_edge_"; }
  std::string count_member() const { return argument->name + "_count_"; }
  // The index expression, for code in the node (`prefix` empty) or about it ("node->").
  std::string index(const std::string& prefix) const {
    return fixed_index ? std::to_string(*fixed_index) : prefix + edge_member();
  }
  // Whether the input needs a gradient, for code in the node or about it.
  std::string needs_grad(const std::string& prefix) const {
    if (is_list()) {
      return fmt::format("needs_any_input_grad({}, {}{}, {}{})", prefix.empty() ? "*this" : "*node",
                         prefix, edge_member(), prefix, count_member());
    }
    return fmt::format("{}needs_input_grad({})", prefix, index(prefix));
  }
};

// Something a formula reads that the node keeps from the forward call.
struct SavedValue {
  std::string name;             // as the formulas read it; the member is `<name>_`
  std::string member_type;      // what the node keeps
  std::string saved;            // what the recording function stores, from its own names
  std::string local;            // the declaration that gives a formula `name`
  std::string release;          // what release_saved() does, empty for values without tensors
  bool is_output = false;       // stored after the op ran
  std::vector<size_t> readers;  // the formulas that read it
};

std::string member(const std::string& name) { return name + "_"; }

std::string unpack_tensor(const std::string& name) {
  return fmt::format("const Tensor {} = {}.unpack(*this, \"{}\");", name, member(name), name);
}

std::string reset(const std::string& name) { return member(name) + ".reset();"; }

// The value kept for an argument a formula reads: tensors as SavedVariables, the rest as an
// owning copy of what the public function takes.
SavedValue saved_argument(const Argument& a) {
  const std::string& n = a.name;
  const std::string m = member(n);
  auto value = [&](std::string type, std::string saved, std::string local) {
    return SavedValue{n, std::move(type), std::move(saved), std::move(local), "", false, {}};
  };
  switch (classify(a.type)) {
    case TypeCategory::Tensor:
      return {n,
              "SavedVariable",
              fmt::format("SavedVariable({}, false)", n),
              unpack_tensor(n),
              reset(n),
              false,
              {}};
    case TypeCategory::OptionalTensor:
      return {n,
              "SavedVariable",
              fmt::format("SavedVariable({}.value_or(Tensor()), false)", n),
              fmt::format("const std::optional<Tensor> {} = optional_tensor({}.unpack(*this, "
                          "\"{}\"));",
                          n, m, n),
              reset(n),
              false,
              {}};
    case TypeCategory::TensorList:
      return {
          n,
          "std::vector<SavedVariable>",
          fmt::format("save_list({})", n),
          fmt::format("const std::vector<Tensor> {} = unpack_list({}, *this, \"{}\");", n, m, n),
          fmt::format("reset_list({});", m),
          false,
          {}};
    case TypeCategory::IntList:
      return value("DimVector", n, fmt::format("const IntArrayRef {} = {};", n, m));
    case TypeCategory::OptionalIntList:
      return value("std::optional<DimVector>", fmt::format("optional_dims({})", n),
                   fmt::format("const OptionalIntArrayRef {} = optional_ref({});", n, m));
    case TypeCategory::Str:
      return value("std::string", fmt::format("std::string({})", n),
                   fmt::format("const std::string_view {} = {};", n, m));
    default: {
      std::string type = public_cpp_type(a);
      if (type.starts_with("const ")) type = type.substr(6, type.size() - 7);  // const X& -> X
      return value(type, n, fmt::format("const {}& {} = {};", type, n, m));
    }
  }
}

// `<argument>_sizes`: only the sizes of a tensor (or of each tensor of a list).
SavedValue saved_sizes(const Argument& a, const std::string& name) {
  const std::string m = member(name);
  if (a.type.is_list) {
    return {name,
            "std::vector<DimVector>",
            fmt::format("sizes_of({})", a.name),
            fmt::format("const std::vector<DimVector>& {} = {};", name, m),
            "",
            false,
            {}};
  }
  return {name,
          "DimVector",
          fmt::format("DimVector({}.sizes())", a.name),
          fmt::format("const IntArrayRef {} = {};", name, m),
          "",
          false,
          {}};
}

std::string output_expression(const FunctionSchema& schema, size_t index) {
  return schema.returns.size() == 1 ? "result" : fmt::format("std::get<{}>(result)", index);
}

SavedValue saved_output(const FunctionSchema& schema, const std::string& name, size_t index) {
  return {name,
          "SavedVariable",
          fmt::format("SavedVariable({}, true)", output_expression(schema, index)),
          unpack_tensor(name),
          reset(name),
          true,
          {}};
}

// MulBackward0 for mul: PyTorch's names, the op's words in camel case.
std::string camel_case(const std::string& op_name) {
  std::string result;
  bool upper = true;
  for (const char c : op_name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    result += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return result;
}

std::string recording_function_name(const NativeFunction& f) { return f.func.name.cpp_name(); }

// The public function that runs the op: what the recording function calls with grad mode off.
std::string public_callee(const NativeFunction& f) {
  const CppSignature sig = function_signature(f);
  return has_detail_method_function(f) ? "bp::detail::" + sig.name : "bp::" + sig.name;
}

class NodeGenerator {
 public:
  NodeGenerator(const DerivativeEntry& entry, std::string node_name)
      : entry_(entry), schema_(entry.function->func), node_name_(std::move(node_name)) {
    assign_edges();
    collect_saved_values();
  }

  std::string node() const {
    TemplateLines members;
    for (const SavedValue& v : saved_) {
      members.push_back(fmt::format("{} {}{{}};", v.member_type, member(v.name)));
    }
    for (const EdgeSlot& slot : edges_) {
      if (!slot.fixed_index) members.push_back(fmt::format("size_t {} = 0;", slot.edge_member()));
      if (slot.is_list()) members.push_back(fmt::format("size_t {} = 0;", slot.count_member()));
    }
    if (!members.empty()) members.push_back("");  // a blank line before the functions
    TemplateLines formulas;
    for (size_t i = 0; i < entry_.formulas.size(); ++i) formulas.push_back(formula_block(i));
    TemplateLines releases;
    for (const SavedValue& v : saved_) {
      if (!v.release.empty()) releases.push_back(v.release);
    }
    return fill_template("Autograd.cpp.node.in", {
                                                     {"schema", schema_.str()},
                                                     {"node", node_name_},
                                                     {"op", schema_.name.str()},
                                                     {"members", members},
                                                     {"formulas", formulas},
                                                     {"releases", releases},
                                                 });
  }

  std::string recording_function() const {
    const NativeFunction& f = *entry_.function;
    const CppSignature sig = function_signature(f);
    TemplateLines edges;
    for (const EdgeSlot& slot : edges_) {
      const std::string& n = slot.argument->name;
      if (!slot.fixed_index) {
        edges.push_back(fmt::format("node->{} = node->next_edges().size();", slot.edge_member()));
      }
      if (slot.is_list()) {
        edges.push_back(fmt::format("node->{} = {}.size();", slot.count_member(), n));
      }
      edges.push_back(fmt::format("node->add_next_edge({});", n));
    }
    const TemplateLines saved_inputs = save_statements(false);
    const TemplateLines saved_outputs = save_statements(true);
    TemplateLines input_check;
    std::vector<std::string> plain_inputs;
    for (const Argument& a : schema_.arguments) {
      if (classify(a.type) == TypeCategory::Tensor) plain_inputs.push_back(a.name);
    }
    // An op that can hand back an input unchanged (contiguous(), to()) has one output.
    if (schema_.returns.size() == 1 && !plain_inputs.empty()) {
      input_check.push_back(fmt::format("if (detail::is_an_input(result, {})) return result;",
                                        comma_list(plain_inputs)));
    }
    TemplateLines histories;
    for (size_t i = 0; i < schema_.returns.size(); ++i) {
      if (entry_.output_differentiability[i]) {
        histories.push_back(
            fmt::format("detail::set_history({}, node, {});", output_expression(schema_, i), i));
      }
    }
    return fill_template("Autograd.cpp.record.in",
                         {
                             {"schema", schema_.str()},
                             {"return_type", sig.return_type},
                             {"name", recording_function_name(f)},
                             {"parameters", sig.parameter_list(false)},
                             {"node", node_name_},
                             {"edges", edges},
                             {"num_outputs", std::to_string(schema_.returns.size())},
                             {"saved_inputs", saved_inputs},
                             {"callee", public_callee(f)},
                             {"arguments", sig.argument_list()},
                             {"input_check", input_check},
                             {"histories", histories},
                             {"saved_outputs", saved_outputs},
                         });
  }

 private:
  // One edge slot per input that has a formula, in argument order.
  void assign_edges() {
    size_t next_fixed = 0;
    bool after_list = false;
    for (const Argument& a : schema_.arguments) {
      if (!formula_of(a)) continue;
      EdgeSlot slot{&a, std::nullopt};
      if (!after_list && !a.type.is_list) slot.fixed_index = next_fixed++;
      after_list = after_list || a.type.is_list;
      edges_.push_back(slot);
    }
  }

  const DerivativeFormula* formula_of(const Argument& a) const {
    for (const DerivativeFormula& formula : entry_.formulas) {
      if (std::find(formula.inputs.begin(), formula.inputs.end(), &a) != formula.inputs.end()) {
        return &formula;
      }
    }
    return nullptr;
  }

  const EdgeSlot& slot_of(const Argument* a) const {
    return *std::find_if(edges_.begin(), edges_.end(),
                         [&](const EdgeSlot& slot) { return slot.argument == a; });
  }

  // What each formula reads that the node must keep, in the order first read.
  void collect_saved_values() {
    for (size_t i = 0; i < entry_.formulas.size(); ++i) {
      for (const std::string& name : entry_.formulas[i].names_read) {
        SavedValue* value = find_or_add_saved(name);
        if (value) value->readers.push_back(i);
      }
    }
  }

  SavedValue* find_or_add_saved(const std::string& name) {
    for (SavedValue& v : saved_) {
      if (v.name == name) return &v;
    }
    if (const Argument* a = schema_.find_argument(name)) {
      saved_.push_back(saved_argument(*a));
      return &saved_.back();
    }
    if (name.ends_with("_sizes")) {
      const Argument* a = schema_.find_argument(name.substr(0, name.size() - 6));
      if (a && a->type.is_tensor_like()) {
        saved_.push_back(saved_sizes(*a, name));
        return &saved_.back();
      }
    }
    if (const int index = output_index(schema_, name); index >= 0) {
      saved_.push_back(saved_output(schema_, name, static_cast<size_t>(index)));
      return &saved_.back();
    }
    return nullptr;  // grad, grads, or a function the formula calls
  }

  // Whether formula `i` runs: one of its inputs needs a gradient.
  std::string formula_needed(size_t i, const std::string& prefix) const {
    std::vector<std::string> conditions;
    for (const Argument* a : entry_.formulas[i].inputs) {
      conditions.push_back(slot_of(a).needs_grad(prefix));
    }
    return fmt::format("{}", fmt::join(conditions, " || "));
  }

  // Whether one of `formulas` always runs: together they give gradients to every input with
  // an edge, and a node is recorded only when one of those inputs needs a gradient.
  bool always_runs(const std::vector<size_t>& formulas) const {
    size_t covered = 0;
    for (const size_t i : formulas) covered += entry_.formulas[i].inputs.size();
    return covered == edges_.size();  // an input has one formula at most
  }

  // A value is kept when a formula that reads it may run: the stores of the inputs (or of the
  // outputs), grouped by that condition.
  TemplateLines save_statements(bool outputs) const {
    std::vector<std::pair<std::string, TemplateLines>> groups;
    for (const SavedValue& v : saved_) {
      if (v.is_output != outputs) continue;
      std::vector<std::string> readers;
      for (const size_t reader : v.readers) {
        const std::string condition = formula_needed(reader, "node->");
        if (std::find(readers.begin(), readers.end(), condition) == readers.end()) {
          readers.push_back(condition);
        }
      }
      const std::string condition =
          always_runs(v.readers) ? "" : fmt::format("{}", fmt::join(readers, " || "));
      auto group = std::find_if(groups.begin(), groups.end(),
                                [&](const auto& g) { return g.first == condition; });
      if (group == groups.end()) group = groups.insert(groups.end(), {condition, {}});
      group->second.push_back(fmt::format("node->{} = {};", member(v.name), v.saved));
    }
    TemplateLines lines;
    for (const auto& [condition, statements] : groups) {
      if (condition.empty()) {
        lines.insert(lines.end(), statements.begin(), statements.end());
      } else {
        lines.push_back(fill_template("Autograd.cpp.save.in",
                                      {{"condition", condition}, {"statements", statements}}));
      }
    }
    return lines;
  }

  std::string formula_block(size_t i) const {
    const DerivativeFormula& formula = entry_.formulas[i];
    TemplateLines unpacks;
    for (const std::string& name : formula.names_read) {
      if (name == "grad") unpacks.push_back("const Tensor& grad = grads[0];");
      for (const SavedValue& v : saved_) {
        if (v.name == name) unpacks.push_back(v.local);
      }
    }
    TemplateLines gradients;
    if (formula.inputs.size() == 1) {
      const EdgeSlot& slot = slot_of(formula.inputs[0]);
      if (slot.is_list()) {
        gradients.push_back(fmt::format("place_list_gradients(grad_inputs, *this, {}, {}, {});",
                                        slot.edge_member(), slot.count_member(),
                                        formula.expression));
      } else {
        gradients.push_back(
            fmt::format("grad_inputs[{}] = {};", slot.index(""), formula.expression));
      }
    } else {
      gradients.push_back(fmt::format("auto gradients = {};", formula.expression));
      for (size_t k = 0; k < formula.inputs.size(); ++k) {
        const EdgeSlot& slot = slot_of(formula.inputs[k]);
        gradients.push_back(
            fmt::format("if ({}) grad_inputs[{}] = std::move(std::get<{}>("
                        "gradients));",
                        slot.needs_grad(""), slot.index(""), k));
      }
    }
    return fill_template("Autograd.cpp.formula.in", {
                                                        {"condition", formula_needed(i, "")},
                                                        {"unpacks", unpacks},
                                                        {"gradients", gradients},
                                                    });
  }

  const DerivativeEntry& entry_;
  const FunctionSchema& schema_;
  std::string node_name_;
  std::vector<EdgeSlot> edges_;
  std::vector<SavedValue> saved_;
};

// The node class of each entry with formulas: <CamelCase>Backward<N>, N counting the entries
// whose op names give the same class name.
std::vector<NodeGenerator> node_generators(const Derivatives& derivatives) {
  std::vector<NodeGenerator> generators;
  std::map<std::string, int> count;
  for (const DerivativeEntry& entry : derivatives.entries) {
    if (!entry.records()) continue;
    const std::string base = camel_case(entry.function->func.name.name) + "Backward";
    generators.emplace_back(entry, base + std::to_string(count[base]++));
  }
  return generators;
}

// The differentiable inputs that have a formula, in argument order: what decides recording.
std::vector<std::string> recorded_inputs(const DerivativeEntry& entry) {
  std::vector<std::string> names;
  for (const Argument& a : entry.function->func.arguments) {
    for (const DerivativeFormula& formula : entry.formulas) {
      if (std::find(formula.inputs.begin(), formula.inputs.end(), &a) != formula.inputs.end()) {
        names.push_back(a.name);
        break;
      }
    }
  }
  return names;
}

}  // namespace

std::string generate_autograd_h(const Derivatives& derivatives) {
  TemplateLines declarations;
  for (const DerivativeEntry& entry : derivatives.entries) {
    if (!entry.records()) continue;
    const NativeFunction& f = *entry.function;
    const CppSignature sig = function_signature(f);
    declarations.push_back(
        fill_template("Functions.h.declaration.in", {
                                                        {"schema", f.func.str()},
                                                        {"return_type", sig.return_type},
                                                        {"name", recording_function_name(f)},
                                                        {"parameters", sig.parameter_list(false)},
                                                    }));
  }
  return fill_template("Autograd.h.in", {
                                            {"source", source_file_name(derivatives.path)},
                                            {"declarations", declarations},
                                        });
}

std::string generate_autograd_cpp(const Derivatives& derivatives) {
  TemplateLines nodes;
  TemplateLines recording_functions;
  for (const NodeGenerator& generator : node_generators(derivatives)) {
    nodes.push_back(generator.node());
    recording_functions.push_back(generator.recording_function());
  }
  return fill_template("Autograd.cpp.in", {
                                              {"source", source_file_name(derivatives.path)},
                                              {"nodes", nodes},
                                              {"recording_functions", recording_functions},
                                          });
}

TemplateLines autograd_prologue(const NativeFunction& f, const Derivatives& derivatives) {
  const FunctionSchema& schema = f.func;
  const std::string op = schema.name.str();
  bool writes = false;
  std::vector<std::string> tensors;
  std::vector<std::string> read_tensors;
  for (const Argument& a : schema.arguments) {
    writes = writes || a.is_write();
    if (!a.type.is_tensor_like()) continue;
    tensors.push_back(a.name);
    if (is_differentiable_argument(a)) read_tensors.push_back(a.name);
  }
  if (writes) {
    // Composites that write call structured ops, which check.
    if (f.composite) return {};
    return {fmt::format("autograd::detail::check_not_recorded(\"{}\", {}, {});", op,
                        schema.is_out_fn() ? "false" : "true", comma_list(tensors))};
  }
  const DerivativeEntry* entry = derivatives.find(f);
  if (entry && entry->records()) {
    return {fmt::format("if (autograd::detail::needs_recording({})) [[unlikely]]",
                        comma_list(recorded_inputs(*entry))),
            fmt::format("  return autograd::generated::{}({});", recording_function_name(f),
                        function_signature(f).argument_list())};
  }
  // Composites without formulas record through the ops they call.
  if (entry || f.composite || read_tensors.empty()) return {};
  return {fmt::format("if (autograd::detail::needs_recording({})) [[unlikely]]",
                      comma_list(read_tensors)),
          fmt::format("  autograd::detail::refuse_no_formula(\"{}\");", op)};
}

}  // namespace bp::codegen
