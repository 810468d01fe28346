// Reverse-mode automatic differentiation: grad mode, the graph's nodes, and the functions that
// run a backward pass. The nodes of every differentiable op are generated from
// core/ops/derivatives.yaml (docs/autograd.md).
#pragma once

#include <backplane/dim_vector.h>
#include <backplane/tensor.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace bp {

// Whether ops called on this thread record the autograd graph (true unless a NoGradGuard or
// set_grad_enabled(false) says otherwise).
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Turns graph recording off on this thread for its lifetime (as torch.no_grad()): what runs
// inside produces tensors without history, as optimizers and evaluation want. Guards nest.
class NoGradGuard {
 public:
  NoGradGuard() : previous_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

namespace autograd {

class Node;

// Where a gradient goes: input `input_nr` of `function` (the node that made the tensor, or the
// accumulator of a leaf).
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;

  bool is_valid() const { return function != nullptr; }
};

// What the gradient flowing into an edge must look like: the forward input's shape, dtype and
// device. The engine sums a broadcast gradient down to `sizes` and converts dtype and device.
struct InputMetadata {
  DimVector sizes;
  DType dtype = kFloat32;
  Device device;
};

// One recorded op: it turns the gradients of its outputs into gradients of its inputs. Nodes
// are made by the generated recording functions; the output tensors own them, and a node owns
// the nodes of its inputs through its edges, so the graph goes away with its last output.
class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // "MulBackward": the node's type, as error messages and traces name it.
  virtual std::string_view name() const = 0;
  // "mul.Tensor": the op that recorded it, or empty for nodes that no op records.
  virtual std::string_view op() const { return {}; }
  // `grads` holds one gradient per forward output (undefined where none flowed); the result
  // holds one per next edge (undefined where the edge needs none).
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  // Drops what the node saved for its formulas, once a backward pass without retain_graph ran.
  virtual void release_saved() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  const std::vector<InputMetadata>& input_metadata() const { return input_metadata_; }
  // Orders nodes so that, of two ready nodes, the one recorded later runs first.
  uint64_t sequence_nr() const { return sequence_nr_; }
  // How many forward outputs the node has (gradients `apply` takes).
  uint32_t num_outputs() const { return num_outputs_; }
  // Whether next edge `index` leads anywhere that wants a gradient.
  bool needs_input_grad(size_t index) const {
    return index < next_edges_.size() && next_edges_[index].is_valid();
  }

  // Recording: one edge per differentiable input (an invalid one where the input needs no
  // gradient), in argument order; a tensor list adds one edge per element.
  void add_next_edge(const Tensor& input);
  void add_next_edge(const std::optional<Tensor>& input);
  void add_next_edge(const std::vector<Tensor>& inputs);
  void set_num_outputs(uint32_t count) { num_outputs_ = count; }

 private:
  std::vector<Edge> next_edges_;
  std::vector<InputMetadata> input_metadata_;
  uint64_t sequence_nr_;
  uint32_t num_outputs_ = 1;
};

// Computes the gradients of `outputs` with respect to every leaf that requires grad and adds
// them to the leaves' grad() (as torch.autograd.backward). `grad_outputs` holds one gradient per
// output; it may be empty when every output has one element (the gradient is then 1).
// Without retain_graph, the graph's saved tensors are freed afterwards and a second backward
// through it is an error.
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              bool retain_graph = false);

// The gradients of `outputs` with respect to `inputs`, returned instead of accumulated
// (as torch.autograd.grad). An input that `outputs` do not depend on is an error unless
// allow_unused, which returns an undefined tensor for it.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool allow_unused = false);

}  // namespace autograd
}  // namespace bp
