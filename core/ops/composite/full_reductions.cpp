// sum and mean over every element: the dim overloads with no dims, which reduce them all into a
// 0-dim tensor.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

namespace bp::composite {

Tensor sum(const Tensor& self, std::optional<DType> dtype) {
  return bp::sum(self, std::nullopt, /*keepdim=*/false, dtype);
}

Tensor mean(const Tensor& self, std::optional<DType> dtype) {
  return bp::mean(self, std::nullopt, /*keepdim=*/false, dtype);
}

}  // namespace bp::composite
