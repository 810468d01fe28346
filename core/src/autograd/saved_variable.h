// A tensor a node keeps for its backward formula, and the check that nothing overwrote it.
#pragma once

#include <backplane/tensor.h>

#include <cstdint>
#include <string_view>

namespace bp::autograd {

class Node;

class SavedVariable {
 public:
  SavedVariable() = default;
  // `is_output`: the tensor is an output of the node saving it. The node then keeps the data
  // without the tensor's history, since the history is the node itself and the two would
  // keep each other alive.
  SavedVariable(const Tensor& tensor, bool is_output);

  // The saved tensor, for `node`'s formula that reads `argument`. A bp::Error when the graph
  // was freed by an earlier backward, or when an in-place op wrote the tensor after it was
  // saved (its storage's version moved on).
  Tensor unpack(const Node& node, std::string_view argument) const;
  // Frees the tensor; a later unpack reports that the graph was freed.
  void reset();

 private:
  Tensor data_;
  uint64_t saved_version_ = 0;
  bool was_saved_ = false;  // an undefined optional stays undefined after reset
  bool released_ = false;
};

}  // namespace bp::autograd
