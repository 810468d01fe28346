// Launches of the batched transpose (transpose.cuh).
#include "kernels/launch_layout.h"
#include "kernels/transpose.cuh"

namespace bp::cuda {

void launch_transpose(size_t element_size, const void* in, void* out, const TransposeShape& shape,
                      const LaunchTarget& target) {
  const TransposeTiles tiles = transpose_tiles(shape);
  if (tiles.count == 0) return;
  // 8 blocks of 256 threads fill a multiprocessor's 2048.
  const unsigned int blocks = grid_blocks(tiles.count, 1, target, 8);
  visit_bits_type(element_size, [&](auto tag) {
    using Bits = typename decltype(tag)::type;
    transpose_kernel<Bits>
        <<<blocks, dim3(kTransposeTile, kTransposeTileRowsPerPass), 0, target.stream>>>(
            static_cast<const Bits*>(in), static_cast<Bits*>(out), tiles);
    check_launch("transpose");
  });
}

}  // namespace bp::cuda
