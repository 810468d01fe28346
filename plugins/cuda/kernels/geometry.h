// How kernels address strided tensors. The host collapses a shape (dropping size-1 dimensions
// and merging neighbours that every operand lays out as one) and passes what remains, innermost
// dimension first, by value as a kernel parameter; a thread turns a row-major element index into
// one element offset per operand. Compiled by both the host compiler and nvcc.
#pragma once

#include "kernels/host_device.h"

#include <cstdint>

namespace bp::cuda {

// Dimensions a kernel walks after collapsing. Elementwise launches with more walk the outer
// ones on the host; group kernels refuse them.
inline constexpr int kMaxKernelDims = 8;

// Unsigned 32-bit division by a divisor fixed before the launch, as a high multiply, an add and
// a shift (Granlund and Montgomery, "Division by invariant integers using multiplication", with
// the 33-bit multiplier 2^32 + multiplier): exact for every dividend below 2^32.
class FastDivmod {
 public:
  FastDivmod() = default;

  // `divisor` must be at least 1.
  explicit FastDivmod(uint32_t divisor) : divisor_(divisor) {
    while ((uint64_t{1} << shift_) < divisor) ++shift_;
    const uint64_t excess = (uint64_t{1} << shift_) - divisor;  // below divisor
    multiplier_ = static_cast<uint32_t>((excess << 32) / divisor + 1);
  }

  BP_CUDA_HOST_DEVICE uint32_t divisor() const { return divisor_; }

  BP_CUDA_HOST_DEVICE uint32_t divide(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, multiplier_);
#else
    const auto high = static_cast<uint32_t>((uint64_t{n} * multiplier_) >> 32);
#endif
    return static_cast<uint32_t>((uint64_t{high} + n) >> shift_);
  }

 private:
  uint32_t divisor_ = 1;
  uint32_t multiplier_ = 1;
  uint32_t shift_ = 0;
};

// Division by a divisor fixed before the launch, of dividends below a limit also known then:
// FastDivmod where the limit is at most 2^32, 64-bit division past it.
class Divisor {
 public:
  Divisor() = default;

  // `divisor` must be at least 1; every dividend must be below `dividend_limit`.
  Divisor(int64_t divisor, int64_t dividend_limit)
      : value_(divisor), wide_(dividend_limit > (int64_t{1} << 32) || divisor > UINT32_MAX) {
    if (!wide_) fast_ = FastDivmod(static_cast<uint32_t>(divisor));
  }

  BP_CUDA_HOST_DEVICE int64_t divide(int64_t n) const {
    return wide_ ? n / value_ : fast_.divide(static_cast<uint32_t>(n));
  }

 private:
  int64_t value_ = 1;
  bool wide_ = false;
  FastDivmod fast_;
};

// A shape walked in row-major order by N operands. Index arithmetic is 32-bit (fast division)
// unless the shape has 2^32 elements or more.
template <int N>
struct StridedShape {
  int32_t ndim = 0;   // 0: a single element
  bool wide = false;  // numel >= 2^32
  int64_t sizes[kMaxKernelDims] = {};
  FastDivmod divisors[kMaxKernelDims] = {};
  int64_t strides[N][kMaxKernelDims] = {};

  // The element offset of each operand at row-major index `linear`.
  BP_CUDA_HOST_DEVICE void offsets(int64_t linear, int64_t (&out)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = 0;
    if (!wide) {
      auto rest = static_cast<uint32_t>(linear);
#pragma unroll
      for (int d = 0; d < kMaxKernelDims; ++d) {
        if (d == ndim) break;
        uint32_t coordinate = rest;
        if (d + 1 < ndim) {
          const uint32_t quotient = divisors[d].divide(rest);
          coordinate = rest - quotient * divisors[d].divisor();
          rest = quotient;
        }
#pragma unroll
        for (int k = 0; k < N; ++k) out[k] += static_cast<int64_t>(coordinate) * strides[k][d];
      }
      return;
    }
    int64_t rest = linear;
    for (int d = 0; d < ndim; ++d) {
      int64_t coordinate = rest;
      if (d + 1 < ndim) {
        coordinate = rest % sizes[d];
        rest /= sizes[d];
      }
#pragma unroll
      for (int k = 0; k < N; ++k) out[k] += coordinate * strides[k][d];
    }
  }
};

// A reduction-like walk: the input's dimensions split into kept ones, whose indices name the
// groups, and reduced ones, whose indices name the members of a group. Operand 0 is the input;
// the others are addressed over the same dimensions (stride 0 where they do not vary).
template <int N>
struct GroupShape {
  int64_t groups = 0;
  int64_t group_size = 0;
  StridedShape<N> kept;     // offset of each group's first member
  StridedShape<N> members;  // offset of each member from its group's first
  // Members of operand k are consecutive elements (stride 1, or at most one member).
  bool dense_members[N] = {};
};

}  // namespace bp::cuda
