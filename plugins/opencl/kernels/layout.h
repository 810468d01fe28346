// How kernels address strided tensors. An elementwise kernel walks one shape in row-major
// order with one set of strides per operand; group kernels (reductions, softmax, layer norm)
// walk the groups (kept dimensions) and the members of each group (reduced dimensions). Both
// shapes are collapsed first, dropping size-1 dimensions and merging neighbours that every
// operand lays out as one, so that a contiguous tensor of any shape is one dimension, and then
// passed to kernels as long8 vectors, innermost dimension first.
#pragma once

#include <backplane/sdk/reduction_dims.hpp>
#include <backplane/sdk/strided_loop.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace bp::opencl {

using plugin::TensorView;

// Kernels take at most this many dimensions after collapsing (more, in elementwise kernels,
// are walked by the host).
inline constexpr size_t kMaxKernelDims = 8;
using Dims8 = std::array<int64_t, kMaxKernelDims>;

// Each operand's strides over the shape being walked, in elements.
using OperandStrides = std::vector<std::span<const int64_t>>;

// A dimension beyond the kernel's, walked by the host: one launch per index.
struct OuterDim {
  int64_t size;
  std::vector<int64_t> strides;  // one per operand
};

struct WalkShape {
  int64_t numel = 0;            // of the kernel's part (all of it unless `outer` has dims)
  int32_t ndim = 0;             // after collapsing; 0 for a single element or none
  Dims8 size{};                 // innermost first, 1 past ndim
  std::vector<Dims8> strides;   // one per operand, innermost first, 0 past ndim
  std::vector<OuterDim> outer;  // outermost first
};

// `sizes` as walked by operands with `strides`. The innermost kMaxKernelDims dimensions that
// remain go to the kernel; any beyond them go to `outer` when `outer_allowed`, and are refused
// with BP_STATUS_UNIMPLEMENTED otherwise.
WalkShape collapse(std::span<const int64_t> sizes, const OperandStrides& strides,
                   std::string_view op, bool outer_allowed);

// Whether every operand is dense over the walk (stride 1 over one dimension, or one element),
// so that kernels need no index arithmetic.
bool all_dense(const WalkShape& shape);

struct GroupShape {
  WalkShape kept;     // one group per index
  WalkShape members;  // the members of a group, in row-major order of the reduced dimensions
  int64_t groups() const { return kept.numel; }
  int64_t group_size() const { return members.numel; }
};

// `sizes` split into kept and reduced dimensions (`reduced[d]`), for operands whose strides
// span all of `sizes` (0 where an operand does not vary: a reduction's output along reduced
// dimensions, layer norm's weight along kept ones).
GroupShape split_groups(std::span<const int64_t> sizes, const plugin::DimValues<bool>& reduced,
                        const OperandStrides& strides, std::string_view op);

// Dimension arguments follow the SDK's rules and messages, shared with the CPU backend.
using plugin::reduced_dims;
using plugin::reduced_output_strides;
using plugin::single_reduced_dim;
using plugin::single_reduced_dim_or_all;
using plugin::trailing_dims;
using plugin::wrap_dim;

}  // namespace bp::opencl
