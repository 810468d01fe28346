#include <backplane/autograd.h>

#include "autograd/autograd_meta.h"

#include <atomic>

namespace bp::autograd {

namespace {
std::atomic<uint64_t> next_sequence_nr{0};
}  // namespace

Node::Node() : sequence_nr_(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

void Node::add_next_edge(const Tensor& input) {
  next_edges_.push_back(gradient_edge(input));
  InputMetadata& metadata = input_metadata_.emplace_back();
  if (input.defined()) {
    metadata.sizes = DimVector(input.sizes());
    metadata.dtype = input.dtype();
    metadata.device = input.device();
  }
}

void Node::add_next_edge(const std::optional<Tensor>& input) {
  add_next_edge(input ? *input : Tensor());
}

void Node::add_next_edge(const std::vector<Tensor>& inputs) {
  for (const Tensor& input : inputs) add_next_edge(input);
}

}  // namespace bp::autograd
