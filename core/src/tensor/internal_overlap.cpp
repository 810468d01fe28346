#include "tensor/internal_overlap.h"

#include "tensor/shape.h"

#include <backplane/dim_vector.h>
#include <backplane/error.h>
#include <backplane/sdk/checked_arithmetic.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <vector>

namespace bp::detail {
namespace {

// The dims of more than one element, sorted by stride: a DimVector each, so that tensors of
// ordinary rank are checked without a heap allocation.
struct SortedDims {
  DimVector sizes, strides;

  SortedDims(IntArrayRef all_sizes, IntArrayRef all_strides) {
    // From the last dim, so that a row-major layout arrives sorted.
    for (size_t d = all_sizes.size(); d-- > 0;) {
      if (all_sizes[d] < 2) continue;
      const int64_t stride = std::abs(all_strides[d]);
      size_t at = sizes.size();
      sizes.push_back(all_sizes[d]);
      strides.push_back(stride);
      for (; at > 0 && strides[at - 1] > stride; --at) {
        sizes[at] = sizes[at - 1];
        strides[at] = strides[at - 1];
      }
      sizes[at] = all_sizes[d];
      strides[at] = stride;
    }
  }
};

// Whether two elements of the first `count` dims of `dims` lie at one offset, by listing every
// offset; nullopt where there are more than kMaxOffsetsCheckedForOverlap of them.
std::optional<bool> offsets_repeat(const SortedDims& dims, size_t count) {
  int64_t elements = 1;
  for (size_t i = 0; i < count; ++i) {
    const std::optional<int64_t> product = plugin::checked_mul(elements, dims.sizes[i]);
    if (!product || *product > kMaxOffsetsCheckedForOverlap) return std::nullopt;
    elements = *product;
  }
  std::vector<int64_t> offsets{0};
  offsets.reserve(static_cast<size_t>(elements));
  for (size_t i = 0; i < count; ++i) {
    const size_t before = offsets.size();
    for (int64_t index = 1; index < dims.sizes[i]; ++index) {
      for (size_t k = 0; k < before; ++k) offsets.push_back(offsets[k] + index * dims.strides[i]);
    }
  }
  std::ranges::sort(offsets);
  return std::ranges::adjacent_find(offsets) != offsets.end();
}

}  // namespace

void check_no_internal_overlap(IntArrayRef sizes, IntArrayRef strides, std::string_view op,
                               std::string_view arg) {
  if (std::ranges::find(sizes, 0) != sizes.end()) return;  // no elements, none to share
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (strides[d] == 0 && sizes[d] > 1) {
      throw Error(
          fmt::format("{}: argument '{}' repeats its elements along dim {} (stride 0, an "
                      "expanded view), so it cannot hold a result there; write to a "
                      "tensor of its own, such as a .clone() of it",
                      op, arg, d));
    }
  }
  const SortedDims dims(sizes, strides);
  // The reach of the dims below each, and the last dim whose stride does not exceed it.
  int64_t reach = 0;
  size_t unseparated = 0;  // that dim's position plus one; 0 when there is none
  bool reach_fits = true;
  for (size_t i = 0; i < dims.sizes.size() && reach_fits; ++i) {
    if (dims.strides[i] <= reach) unseparated = i + 1;
    const std::optional<int64_t> extent = plugin::checked_mul(dims.strides[i], dims.sizes[i] - 1);
    const std::optional<int64_t> next = extent ? plugin::checked_add(reach, *extent) : std::nullopt;
    reach_fits = next.has_value();
    reach = next.value_or(reach);
  }
  if (reach_fits && unseparated == 0) return;
  const std::optional<bool> repeats = reach_fits ? offsets_repeat(dims, unseparated) : std::nullopt;
  if (repeats == false) return;
  const std::string layout =
      fmt::format("(sizes {}, strides {})", format_shape(sizes), format_shape(strides));
  if (repeats == true) {
    throw Error(
        fmt::format("{}: argument '{}' {} has elements that share memory, so it cannot "
                    "hold a result; write to a tensor of its own, such as a "
                    ".contiguous() copy of it",
                    op, arg, layout));
  }
  throw Error(
      fmt::format("{}: argument '{}' {} may have elements that share memory: its strides "
                  "do not keep its dims apart, and it has too many elements to compare "
                  "their offsets (more than {}); write to a contiguous tensor, such as a "
                  ".contiguous() copy of it",
                  op, arg, layout, kMaxOffsetsCheckedForOverlap));
}

}  // namespace bp::detail
