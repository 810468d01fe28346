// The backward pass: runs the graph's nodes from the outputs towards the leaves, each once,
// after every node that feeds it, and hands each gradient to the node of the input it is for.
#include <backplane/autograd.h>
#include <backplane/factories.h>

#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"
#include "autograd/formulas.h"

#include <fmt/format.h>

#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace bp::autograd {

namespace {

std::string shape_string(IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

// The gradient each output starts from: the caller's, or 1 for a one-element output.
std::vector<Tensor> root_gradients(const char* api, const std::vector<Tensor>& outputs,
                                   const std::vector<Tensor>& grad_outputs) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size()) {
    throw Error(
        fmt::format("{}: {} outputs but {} grad_outputs; pass one gradient per output "
                    "or none",
                    api, outputs.size(), grad_outputs.size()));
  }
  std::vector<Tensor> gradients;
  gradients.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& output = outputs[i];
    if (!output.defined()) throw Error(fmt::format("{}: output {} is undefined", api, i));
    if (!requires_grad(output)) {
      throw Error(fmt::format(
          "{}: output {} does not require grad and has no grad_fn: no input of the ops that "
          "made it requires grad (call requires_grad_() on the parameters), or it was made "
          "under bp::NoGradGuard",
          api, i));
    }
    const Tensor* given = grad_outputs.empty() ? nullptr : &grad_outputs[i];
    if (given != nullptr && given->defined()) {
      if (given->sizes() != output.sizes()) {
        throw Error(
            fmt::format("{}: the gradient for output {} has shape {}, but the output "
                        "has shape {}",
                        api, i, shape_string(given->sizes()), shape_string(output.sizes())));
      }
      gradients.push_back(given->to(output.dtype()).to(output.device()));
    } else if (output.numel() == 1) {
      gradients.push_back(ones(output.sizes(), output.dtype(), output.device()));
    } else {
      throw Error(fmt::format(
          "{}: a gradient can be implied only for a one-element output, and output {} has "
          "shape {}; pass its gradient (bp::ones(output.sizes()) sums it)",
          api, i, shape_string(output.sizes())));
    }
  }
  return gradients;
}

// Makes a node's gradient for one input fit that input: sums a broadcast gradient back to the
// input's shape and converts dtype and device, as the forward op did the other way.
Tensor fit_to_input(const Node& node, size_t index, Tensor gradient) {
  const InputMetadata& input = node.input_metadata()[index];
  if (gradient.sizes() != input.sizes.ref()) {
    if (!formulas::is_expandable_to(input.sizes, gradient.sizes())) {
      throw Error(fmt::format(
          "{}: the gradient for input {} has shape {}, which does not "
          "reduce to the input's shape {}",
          node.name(), index, shape_string(gradient.sizes()), shape_string(input.sizes)));
    }
    gradient = formulas::sum_to(gradient, input.sizes);
  }
  if (gradient.dtype() != input.dtype) gradient = gradient.to(input.dtype);
  if (gradient.device() != input.device) gradient = gradient.to(input.device);
  return gradient;
}

void accumulate(Tensor& slot, Tensor gradient) {
  if (!gradient.defined()) return;
  slot = slot.defined() ? add(slot, gradient) : std::move(gradient);
}

struct LaterFirst {
  bool operator()(const Node* a, const Node* b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

class GraphTask {
 public:
  // For bp::autograd::grad: the gradients reaching these edges are captured. The edges keep
  // their nodes alive, so that no node made later can take an address that one of them had.
  GraphTask(std::vector<Edge> captures, bool accumulate_leaves)
      : captures_(std::move(captures)),
        captured_(captures_.size()),
        accumulate_leaves_(accumulate_leaves) {}

  void run(const std::vector<Edge>& roots, std::vector<Tensor> root_grads, bool retain_graph) {
    count_dependencies(roots);
    for (size_t i = 0; i < roots.size(); ++i) {
      Node* node = roots[i].function.get();
      std::vector<Tensor>& buffer = buffer_of(node);
      accumulate(buffer[roots[i].input_nr], std::move(root_grads[i]));
    }
    std::priority_queue<Node*, std::vector<Node*>, LaterFirst> ready;
    std::unordered_set<Node*> queued;
    for (const Edge& root : roots) {
      Node* node = root.function.get();
      if (dependencies_[node] == 0 && queued.insert(node).second) ready.push(node);
    }
    std::vector<Node*> executed;
    while (!ready.empty()) {
      Node* node = ready.top();
      ready.pop();
      std::vector<Tensor> grads = std::move(buffer_of(node));
      buffers_.erase(node);
      capture(node, grads);
      const bool skip = !accumulate_leaves_ && dynamic_cast<AccumulateGrad*>(node) != nullptr;
      const bool any =
          std::any_of(grads.begin(), grads.end(), [](const Tensor& g) { return g.defined(); });
      std::vector<Tensor> input_grads;
      if (any && !skip) {
        input_grads = call(*node, std::move(grads));
        executed.push_back(node);
      }
      const std::vector<Edge>& edges = node->next_edges();
      for (size_t i = 0; i < edges.size(); ++i) {
        if (!edges[i].is_valid()) continue;
        Node* next = edges[i].function.get();
        if (i < input_grads.size() && input_grads[i].defined()) {
          accumulate(buffer_of(next)[edges[i].input_nr],
                     fit_to_input(*node, i, std::move(input_grads[i])));
        }
        if (--dependencies_[next] == 0) ready.push(next);
      }
    }
    // Freed only once the whole pass succeeded, so that a pass that fails leaves the graph as
    // it was.
    if (!retain_graph) {
      for (Node* node : executed) node->release_saved();
    }
  }

  std::vector<Tensor> take_captured() { return std::move(captured_); }

 private:
  void count_dependencies(const std::vector<Edge>& roots) {
    std::vector<Node*> stack;
    std::unordered_set<Node*> seen;
    for (const Edge& root : roots) {
      if (seen.insert(root.function.get()).second) stack.push_back(root.function.get());
    }
    while (!stack.empty()) {
      Node* node = stack.back();
      stack.pop_back();
      dependencies_.try_emplace(node, 0);
      for (const Edge& edge : node->next_edges()) {
        if (!edge.is_valid()) continue;
        Node* next = edge.function.get();
        ++dependencies_[next];
        if (seen.insert(next).second) stack.push_back(next);
      }
    }
  }

  std::vector<Tensor>& buffer_of(Node* node) {
    auto [it, inserted] = buffers_.try_emplace(node);
    if (inserted) it->second.resize(node->num_outputs());
    return it->second;
  }

  void capture(Node* node, const std::vector<Tensor>& grads) {
    for (size_t i = 0; i < captures_.size(); ++i) {
      if (captures_[i].function.get() == node && captures_[i].input_nr < grads.size()) {
        captured_[i] = grads[captures_[i].input_nr];
      }
    }
  }

  static std::vector<Tensor> call(Node& node, std::vector<Tensor>&& grads) {
    std::vector<Tensor> input_grads;
    try {
      input_grads = node.apply(std::move(grads));
    } catch (const std::exception& error) {
      const std::string_view op = node.op();
      throw Error(fmt::format("backward of {}{}{}{} failed: {}", op, op.empty() ? "" : " (",
                              node.name(), op.empty() ? "" : ")", error.what()));
    }
    if (!input_grads.empty() && input_grads.size() != node.next_edges().size()) {
      throw Error(fmt::format("{}: returned {} gradients for {} inputs", node.name(),
                              input_grads.size(), node.next_edges().size()));
    }
    return input_grads;
  }

  std::vector<Edge> captures_;
  std::vector<Tensor> captured_;
  bool accumulate_leaves_;
  std::unordered_map<Node*, int64_t> dependencies_;
  std::unordered_map<Node*, std::vector<Tensor>> buffers_;
};

std::vector<Edge> root_edges(const std::vector<Tensor>& outputs) {
  std::vector<Edge> edges;
  edges.reserve(outputs.size());
  for (const Tensor& output : outputs) edges.push_back(gradient_edge(output));
  return edges;
}

}  // namespace

void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs,
              bool retain_graph) {
  std::vector<Tensor> gradients = root_gradients("backward", outputs, grad_outputs);
  const NoGradGuard no_grad;
  GraphTask task({}, /*accumulate_leaves=*/true);
  task.run(root_edges(outputs), std::move(gradients), retain_graph);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph,
                         bool allow_unused) {
  std::vector<Tensor> gradients = root_gradients("autograd::grad", outputs, grad_outputs);
  std::vector<Edge> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !requires_grad(inputs[i])) {
      throw Error(
          fmt::format("autograd::grad: input {} does not require grad, so it has no "
                      "gradient; call requires_grad_() on it before the forward pass",
                      i));
    }
    captures.push_back(gradient_edge(inputs[i]));
  }
  std::vector<Tensor> result;
  {
    const NoGradGuard no_grad;
    GraphTask task(std::move(captures), /*accumulate_leaves=*/false);
    task.run(root_edges(outputs), std::move(gradients), retain_graph);
    result = task.take_captured();
  }
  for (size_t i = 0; i < result.size(); ++i) {
    if (!result[i].defined() && !allow_unused) {
      throw Error(
          fmt::format("autograd::grad: input {} is not used by the graph of the "
                      "outputs; pass allow_unused=true to get an undefined tensor for it",
                      i));
    }
  }
  return result;
}

}  // namespace bp::autograd
