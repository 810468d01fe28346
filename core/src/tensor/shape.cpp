#include "tensor/shape.h"

#include <backplane/error.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

namespace bp::detail {

std::string format_shape(IntArrayRef sizes) {
  return fmt::format("[{}]", fmt::join(sizes.begin(), sizes.end(), ", "));
}

int64_t wrap_dim(std::string_view op, int64_t dim, int64_t rank, bool wrap_scalar) {
  if (rank == 0) {
    if (wrap_scalar && (dim == 0 || dim == -1)) return 0;
    throw Error(fmt::format(
        "{}: dim {} is out of range for a tensor of 0 dims (it has no dimensions)", op, dim));
  }
  if (dim < -rank || dim >= rank) {
    throw Error(fmt::format("{}: dim {} is out of range for a tensor of {} dims (expected {}..{})",
                            op, dim, rank, -rank, rank - 1));
  }
  return dim < 0 ? dim + rank : dim;
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

int64_t checked_numel(IntArrayRef sizes, std::string_view what) {
  int64_t numel = 1;
  bool overflow = false;
  bool has_zero = false;
  for (int64_t size : sizes) {
    if (size < 0) {
      throw Error(fmt::format("{}: negative size {} in shape {}; sizes must be >= 0", what, size,
                              format_shape(sizes)));
    }
    has_zero = has_zero || size == 0;
    overflow = overflow || __builtin_mul_overflow(numel, size, &numel);
  }
  // A zero anywhere makes the count 0 even if an earlier partial product overflowed.
  if (has_zero) return 0;
  if (overflow) {
    throw Error(fmt::format("{}: shape {} has more than {} elements", what, format_shape(sizes),
                            std::numeric_limits<int64_t>::max()));
  }
  return numel;
}

int64_t storage_extent(IntArrayRef sizes, IntArrayRef strides, std::string_view op) {
  if (sizes.size() != strides.size()) {
    throw Error(fmt::format("{}: sizes {} and strides {} differ in length", op, format_shape(sizes),
                            format_shape(strides)));
  }
  if (checked_numel(sizes, op) == 0) return 0;
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (strides[d] < 0) {
      throw Error(fmt::format("{}: negative stride {} in strides {}", op, strides[d],
                              format_shape(strides)));
    }
    int64_t reach = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
        __builtin_add_overflow(extent, reach, &extent)) {
      throw Error(fmt::format("{}: sizes {} with strides {} reach past 2^63 elements", op,
                              format_shape(sizes), format_shape(strides)));
    }
  }
  return extent;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  const size_t rank = std::max(a.size(), b.size());
  DimVector result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // i counts from the last dim.
    const int64_t size_a = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t size_b = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (size_a != size_b && size_a != 1 && size_b != 1) {
      throw Error(fmt::format(
          "shapes {} and {} cannot be broadcast together: the size of tensor a ({}) must match "
          "the size of tensor b ({}) at non-singleton dimension {}",
          format_shape(a), format_shape(b), size_a, size_b, rank - 1 - i));
    }
    result[rank - 1 - i] = size_a == 1 ? size_b : size_a;
  }
  return result;
}

bool is_expandable_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t size_from = from[from.size() - 1 - i];
    const int64_t size_to = to[to.size() - 1 - i];
    if (size_from != size_to && size_from != 1) return false;
  }
  return true;
}

}  // namespace bp::detail
