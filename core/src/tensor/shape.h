// Shape arithmetic shared by tensors, factories and meta functions: dim wrapping, contiguous
// strides, element counts and PyTorch-style broadcasting. Errors are bp::Error with messages
// that show the shapes involved.
#pragma once

#include <backplane/array_ref.h>
#include <backplane/dim_vector.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace bp::detail {

// "[2, 3]"
std::string format_shape(IntArrayRef sizes);

// Maps a dim in [-rank, rank) to [0, rank). A 0-dim tensor accepts -1 and 0 when
// `wrap_scalar` holds, as PyTorch's reductions and softmax do. A dim out of range is an error
// that names `op`, the operation given it.
int64_t wrap_dim(std::string_view op, int64_t dim, int64_t rank, bool wrap_scalar = true);

// Row-major strides for `sizes` (size-0 and size-1 dims get the stride they would have with
// size 1, as PyTorch does).
DimVector contiguous_strides(IntArrayRef sizes);

// The element count of `sizes`; a negative size or an overflowing product is a bp::Error that
// names `what` ("empty", "view").
int64_t checked_numel(IntArrayRef sizes, std::string_view what);

// The storage elements a strided layout reaches: one past its farthest element, 0 when it
// has none. Sizes and strides of different lengths, a negative size or stride, or a reach past
// 2^63 elements is a bp::Error that names `op`.
int64_t storage_extent(IntArrayRef sizes, IntArrayRef strides, std::string_view op);

// The shape both shapes broadcast to, aligning trailing dims; a dim of size 1 stretches.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b);

// True when a tensor of shape `from` expands to `to` (the shape broadcast_shapes(from, to)
// would equal `to`).
bool is_expandable_to(IntArrayRef from, IntArrayRef to);

}  // namespace bp::detail
