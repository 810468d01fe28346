// Moving a contiguous tensor's bytes between devices, for the core's own copies.
#pragma once

#include <backplane/tensor.h>

namespace bp::detail {

// Writes `source`'s elements into `target`, both contiguous, of one dtype and as many elements,
// on any devices: memcpy between host addresses, else the owning backend's copy functions. No
// kernel runs, so a backend without a copy_ kernel can still be written to and read from.
void copy_contiguous(const Tensor& source, const Tensor& target);

}  // namespace bp::detail
