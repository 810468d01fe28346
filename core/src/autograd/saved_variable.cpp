#include "autograd/saved_variable.h"

#include <backplane/autograd.h>

#include <fmt/format.h>

namespace bp::autograd {

SavedVariable::SavedVariable(const Tensor& tensor, bool is_output) : was_saved_(true) {
  if (!tensor.defined()) return;
  data_ = is_output ? tensor.detach() : tensor;
  saved_version_ = tensor._version();
}

Tensor SavedVariable::unpack(const Node& node, std::string_view argument) const {
  if (released_) {
    throw Error(fmt::format(
        "{}: trying to run backward through the graph a second time, or to read its saved "
        "tensors after they were freed: {} was freed by the first backward; pass "
        "retain_graph=true to the first backward if the graph is needed again",
        node.name(), argument));
  }
  if (data_.defined() && data_._version() != saved_version_) {
    throw Error(fmt::format(
        "{} ({}): {} was saved for the gradient at version {}, but an in-place op has written "
        "it since (now version {}); give the in-place op a copy (.clone()) or use its "
        "out-of-place form",
        node.name(), node.op().empty() ? std::string_view("no op") : node.op(), argument,
        saved_version_, data_._version()));
  }
  return data_;
}

void SavedVariable::reset() {
  data_ = Tensor();
  released_ = was_saved_;
}

}  // namespace bp::autograd
