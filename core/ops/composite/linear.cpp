// linear over addmm: an input of any rank is flattened to the 2-D product addmm computes, so the
// bias is added by the matrix product itself wherever a backend fuses it.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

#include "tensor/shape.h"

#include <fmt/format.h>

namespace bp::composite {

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (!input.defined() || !weight.defined()) {
    throw Error("linear: an argument is an undefined tensor (a default-constructed bp::Tensor)");
  }
  if (weight.dim() != 1 && weight.dim() != 2) {
    throw Error(
        fmt::format("linear: expected a 2-D weight (out_features, in_features), or a 1-D "
                    "one (in_features), got shape {}",
                    detail::format_shape(weight.sizes())));
  }
  // A 1-D weight is one output feature whose dim the result drops, as PyTorch's linear does.
  const bool one_feature = weight.dim() == 1;
  const Tensor weight_2d = one_feature ? weight.unsqueeze(0) : weight;
  const int64_t in_features = weight_2d.size(1);
  if (input.dim() == 0 || input.size(-1) != in_features) {
    throw Error(fmt::format(
        "linear: input of shape {} does not end in in_features={}, which "
        "weight of shape {} expects",
        detail::format_shape(input.sizes()), in_features, detail::format_shape(weight.sizes())));
  }
  int64_t rows = 1;  // a 1-D input is one row
  for (int64_t d = 0; d + 1 < input.dim(); ++d) rows *= input.size(d);
  const Tensor flat = input.reshape({rows, in_features});
  const Tensor weight_t = weight_2d.transpose(0, 1);
  const Tensor out = bias && bias->defined() ? addmm(*bias, flat, weight_t) : mm(flat, weight_t);
  DimVector out_shape(input.sizes());
  if (one_feature) {
    out_shape.erase(out_shape.size() - 1);
  } else {
    out_shape[out_shape.size() - 1] = weight_2d.size(0);
  }
  return out.view(out_shape);
}

}  // namespace bp::composite
