// copy_elements, the strided, dtype-converting copy (copy_elements.h): a same-dtype copy moves
// bits, a dense one converts through convert_elements, any other is a strided map_elements.
#include "kernels/copy_elements.h"

#include "kernels/multiversion.h"
#include "kernels/parallel_elements.h"

#include <cstdint>
#include <span>

namespace bp::cpu {
namespace {

// A same-dtype copy moves bits: no conversion through the compute type, so NaN payloads
// survive and every dtype of one width shares one loop.
template <typename Bits>
void copy_bits(std::span<const int64_t> sizes, const StridedElements& dst,
               const StridedElements& src) {
  parallel_map_elements(
      sizes, [](Bits bits) { return bits; },
      Operand<Bits>{static_cast<Bits*>(dst.data), dst.strides},
      Operand<const Bits>{static_cast<const Bits*>(src.data), src.strides});
}

// Dense elements converted by convert_elements, compiled for each target.
template <typename To, typename From>
BP_CPU_MULTIVERSIONED void convert_chunk(const From* from, To* to, int64_t count) {
  convert_elements(from, to, count);
}

// Whether a copy from From to To converts in one step (one of them is its own compute type):
// then dense copies run convert_elements directly, without map_elements' staging of each block
// in the compute type.
template <typename To, typename From>
inline constexpr bool kConvertsDirectly = kConvertsToCompute<To> != kConvertsToCompute<From>;

}  // namespace

void copy_elements(std::span<const int64_t> sizes, const StridedElements& dst,
                   const StridedElements& src) {
  if (dst.dtype == src.dtype) {
    switch (element_size(dst.dtype)) {
      case 1: return copy_bits<uint8_t>(sizes, dst, src);
      case 2: return copy_bits<uint16_t>(sizes, dst, src);
      case 4: return copy_bits<uint32_t>(sizes, dst, src);
      case 8: return copy_bits<uint64_t>(sizes, dst, src);
    }
  }
  plugin::visit(dst.dtype, [&](auto dst_tag) {
    using To = typename decltype(dst_tag)::type;
    plugin::visit(src.dtype, [&](auto src_tag) {
      using From = typename decltype(src_tag)::type;
      if constexpr (kConvertsDirectly<To, From>) {
        if (is_row_major(sizes, dst.strides) && is_row_major(sizes, src.strides)) {
          int64_t count = 1;
          for (const int64_t size : sizes) count *= size;
          parallel_dense_chunks(count, [&](int64_t first, int64_t length) {
            convert_chunk(static_cast<const From*>(src.data) + first,
                          static_cast<To*>(dst.data) + first, length);
          });
          return;
        }
      }
      parallel_map_elements(
          sizes, [](auto value) { return value; },
          Operand<To>{static_cast<To*>(dst.data), dst.strides},
          Operand<const From>{static_cast<const From*>(src.data), src.strides});
    });
  });
}

}  // namespace bp::cpu
