// Whether a tensor's own elements share memory (internal overlap). A tensor two of whose
// elements lie at one storage offset cannot hold a result: writing one element overwrites
// another, and which value is left depends on the order a kernel writes them in.
#pragma once

#include <backplane/array_ref.h>

#include <cstdint>
#include <string_view>

namespace bp::detail {

// The most storage offsets check_no_internal_overlap lists to decide a layout exactly.
inline constexpr int64_t kMaxOffsetsCheckedForOverlap = int64_t{1} << 16;

// Refuses a tensor to be written (`arg` of `op`) whose elements may share memory, with a
// bp::Error naming it, its sizes and strides, and what to pass instead.
//
// Exact where that is cheap, and conservative beyond: dims of size 1 are dropped and the rest
// sorted by stride; a dim whose stride exceeds the reach of the smaller ones (the sum of
// stride * (size - 1) over them) keeps its elements apart from theirs, so a layout whose every
// dim does so cannot overlap (every view the core makes of a tensor that does not overlap is
// one). Otherwise two elements at one offset differ only in the dims up to the last that fails
// the test, and those dims' offsets are listed and compared, when there are at most
// kMaxOffsetsCheckedForOverlap of them; a layout with more is refused as one that may overlap.
// A stride of 0 along a dim of two or more (an expanded view) is refused by name.
void check_no_internal_overlap(IntArrayRef sizes, IntArrayRef strides, std::string_view op,
                               std::string_view arg);

}  // namespace bp::detail
