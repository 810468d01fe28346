// Moving tensors between Backplane and libtorch through host memory (data_ptr and from_blob),
// and comparing them there.
#pragma once

#include <backplane/backplane.h>

#include <torch/torch.h>

#include <string>
#include <vector>

namespace torch_parity {

// A libtorch copy of a host tensor (Float32 or Int64), contiguous.
torch::Tensor to_torch(const bp::Tensor& tensor);

// Writes each of `from`'s values into the libtorch tensor of the same position, which keeps
// its identity (and so its place in the autograd graph and the optimizer).
void copy_values(const std::vector<bp::Tensor>& from, const std::vector<torch::Tensor>& to);

// Whether `ours` matches `theirs` (same shape, every element within float32 tolerance: |a - b|
// <= kAbsoluteTolerance + kRelativeTolerance * |b|), as a doctest check that names `what` and
// the worst element.
void check_close(const std::string& what, const bp::Tensor& ours, const torch::Tensor& theirs);

// torch.testing.assert_close's float32 tolerances. The two sides differ only in the order in
// which they sum products (oneDNN's blocking against libtorch's loops), a few roundings.
inline constexpr double kRelativeTolerance = 1.3e-6;
inline constexpr double kAbsoluteTolerance = 1e-5;

}  // namespace torch_parity
