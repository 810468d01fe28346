#include "dispatch/out_arg.h"

#include "tensor/shape.h"
#include "tensor/type_promotion.h"

#include <backplane/backplane.h>

#include <fmt/format.h>

namespace bp::detail {

OutArg::OutArg(Tensor& given, const OutputSpec& spec, Kind kind, const char* op, const char* arg)
    : given_(given) {
  if (!given.defined()) {
    throw Error(fmt::format("{}: argument '{}' is an undefined tensor; pass a tensor to write to",
                            op, arg));
  }
  if (spec.device && given.device() != *spec.device) {
    throw Error(
        fmt::format("{}: argument '{}' is on {}, but the result is computed on {}; pass "
                    "an output on {}",
                    op, arg, given.device().str(), spec.device->str(), spec.device->str()));
  }
  if (DimVector(given.sizes()) != spec.sizes) {
    if (kind == Kind::InPlace) {
      throw Error(
          fmt::format("{}: the result has shape {}, but '{}', which it is written to in "
                      "place, has shape {}",
                      op, format_shape(spec.sizes), arg, format_shape(given.sizes())));
    }
    if (given.numel() != 0) {
      throw Error(
          fmt::format("{}: argument '{}' has shape {}, but the result has shape {}; pass "
                      "an output of that shape, or an empty one to be resized",
                      op, arg, format_shape(given.sizes()), format_shape(spec.sizes)));
    }
    given_ = empty(spec.sizes, given.dtype(), given.device());
  }
  if (given_.dtype() != spec.dtype && !can_cast(spec.dtype, given_.dtype())) {
    throw Error(
        fmt::format("{}: result type {} can't be cast to the desired output type {} of "
                    "argument '{}'",
                    op, dtype_name(spec.dtype), dtype_name(given_.dtype()), arg));
  }
  // Kernels write contiguous outputs of the computed dtype; anything else goes through a
  // temporary that finish() copies over.
  if (given_.dtype() != spec.dtype || !given_.is_contiguous()) {
    temporary_ = empty(spec.sizes, spec.dtype, given_.device());
  }
}

void OutArg::finish() {
  if (temporary_.defined()) given_.copy_(temporary_);
}

}  // namespace bp::detail
