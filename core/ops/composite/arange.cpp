// arange without out=: the meta step sizes the result, which gets the requested dtype and
// device, and the arange.start_out kernel fills it.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

#include <core_generated/Kernels.h>
#include <core_generated/MetaFunctions.h>

namespace bp::composite {

Tensor arange(const Scalar& end, std::optional<DType> dtype, std::optional<Device> device) {
  return bp::arange(0, end, 1, dtype, device);
}

Tensor arange_start_step(const Scalar& start, const Scalar& end, const Scalar& step,
                         std::optional<DType> dtype, std::optional<Device> device) {
  const std::array<OutputSpec, 1> specs = meta::arange_start_out(start, end, step);
  Tensor out =
      empty(specs[0].sizes, dtype.value_or(specs[0].dtype), device ? *device : default_device());
  detail::kernels::arange_start_out(start, end, step, out);
  return out;
}

}  // namespace bp::composite
