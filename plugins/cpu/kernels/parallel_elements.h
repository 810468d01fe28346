// map_elements split across the plugin's thread pool, its loops multiversioned (multiversion.h).
// Every element is computed exactly as the single-threaded loop computes it, so results are
// bit-identical for any thread count.
#pragma once

#include "kernels/multiversion.h"
#include "kernels/strided_loop.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>

namespace bp::cpu {

// Below about this many elements per thread, starting threads costs more than it saves.
inline constexpr int64_t kElementsPerChunk = 16 * 1024;

// The grain for parallel_for over an index that stands for `elements_per_index` elements each.
inline int64_t grain_for(int64_t elements_per_index) {
  const int64_t per_index = std::max<int64_t>(elements_per_index, 1);
  return (kElementsPerChunk + per_index - 1) / per_index;
}

// Whether `strides` lay out `sizes` densely in row-major order (size-1 dimensions aside).
inline bool is_row_major(std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

namespace parallel_detail {

// map_elements, with its loops compiled for each target of BP_CPU_MULTIVERSIONED.
template <typename Fn, typename Out, typename... In>
BP_CPU_MULTIVERSIONED void map_elements_multiversioned(std::span<const int64_t> sizes, Fn& fn,
                                                       Operand<Out> out, Operand<const In>... in) {
  map_elements(sizes, fn, out, in...);
}

// Dense operands are split along their flattened index in pieces of this many elements, a
// multiple of a 64-byte cache line for every dtype, so that no two threads write one line.
inline constexpr int64_t kDensePiece = 64;

// Splits the outermost dimension longer than 1 into chunks, each a map_elements call over its
// slice of every operand.
template <typename Fn, typename Out, typename... In>
void map_split_outermost(std::span<const int64_t> sizes, int64_t count, Fn& fn, Operand<Out> out,
                         Operand<const In>... in) {
  const auto split = static_cast<size_t>(
      std::find_if(sizes.begin(), sizes.end(), [](int64_t size) { return size > 1; }) -
      sizes.begin());
  parallel_for(sizes[split], grain_for(count / sizes[split]), [&](int64_t begin, int64_t end) {
    DimValues<int64_t> chunk_sizes(sizes.size());
    std::copy(sizes.begin(), sizes.end(), &chunk_sizes[0]);
    chunk_sizes[split] = end - begin;
    map_elements_multiversioned(
        chunk_sizes.span(), fn, Operand<Out>{out.data + begin * out.strides[split], out.strides},
        Operand<const In>{in.data + begin * in.strides[split], in.strides}...);
  });
}

}  // namespace parallel_detail

// Splits `count` dense elements across threads in chunks of whole pieces (the last one may be
// short): chunk_fn(first, length) for each.
template <typename ChunkFn>
void parallel_dense_chunks(int64_t count, ChunkFn&& chunk_fn) {
  constexpr int64_t kPiece = parallel_detail::kDensePiece;
  const int64_t pieces = (count + kPiece - 1) / kPiece;
  parallel_for(pieces, grain_for(kPiece), [&](int64_t begin, int64_t end) {
    const int64_t first = begin * kPiece;
    chunk_fn(first, std::min(end * kPiece, count) - first);
  });
}

namespace parallel_detail {

// map_elements over `count` dense elements, in parallel_dense_chunks.
template <typename Fn, typename Out, typename... In>
void map_split_dense(int64_t count, Fn& fn, Out* out, const In*... in) {
  const int64_t unit_strides[] = {1};
  parallel_dense_chunks(count, [&](int64_t first, int64_t length) {
    const int64_t chunk_sizes[] = {length};
    map_elements_multiversioned(std::span<const int64_t>(chunk_sizes), fn,
                                Operand<Out>{out + first, unit_strides},
                                Operand<const In>{in + first, unit_strides}...);
  });
}

// Tiles of kTileEdge x kTileEdge elements: one operand's rows cross the other's, and a tile of
// each stays in the L1 cache while its rows are walked.
inline constexpr int64_t kTileEdge = 64;

// The two dimensions to walk in tiles, when an operand runs along the innermost dimension
// (`inner`, the walk's rows) while another, strided along it, runs along `across` instead (a
// transpose): walking whole rows would then read or write a new cache line, and a new page, for
// each element of that operand. Both must span more than a tile.
struct TiledDims {
  size_t inner, across;
};

inline std::optional<TiledDims> crossing_dims(
    std::span<const int64_t> sizes, std::initializer_list<std::span<const int64_t>> strides) {
  size_t inner = sizes.size();
  while (inner > 0 && sizes[inner - 1] == 1) --inner;
  if (inner-- == 0 || sizes[inner] <= kTileEdge) return std::nullopt;
  const auto unit = [](int64_t stride) { return stride == 1 || stride == -1; };
  bool along_inner = false;
  std::optional<size_t> across;
  for (const std::span<const int64_t> operand : strides) {
    if (unit(operand[inner])) {
      along_inner = true;
    } else if (operand[inner] != 0 && !across) {
      for (size_t d = 0; d < inner; ++d) {
        if (unit(operand[d]) && sizes[d] > kTileEdge) across = d;
      }
    }
  }
  if (!along_inner || !across) return std::nullopt;
  return TiledDims{inner, *across};
}

// map_elements over tiles of the two crossing dimensions, split across threads by tile; each
// tile is a map_elements call over the whole of every other dimension.
template <typename Fn, typename Out, typename... In>
void map_split_tiles(std::span<const int64_t> sizes, int64_t count, TiledDims tiled, Fn& fn,
                     Operand<Out> out, Operand<const In>... in) {
  const auto tiles = [](int64_t size) { return (size + kTileEdge - 1) / kTileEdge; };
  const int64_t inner_tiles = tiles(sizes[tiled.inner]);
  const int64_t tile_count = tiles(sizes[tiled.across]) * inner_tiles;
  parallel_for(tile_count, grain_for(count / tile_count), [&](int64_t begin, int64_t end) {
    DimValues<int64_t> tile_sizes(sizes.size());
    std::copy(sizes.begin(), sizes.end(), &tile_sizes[0]);
    for (int64_t tile = begin; tile < end; ++tile) {
      const int64_t first_across = tile / inner_tiles * kTileEdge;
      const int64_t first_inner = tile % inner_tiles * kTileEdge;
      tile_sizes[tiled.across] = std::min(kTileEdge, sizes[tiled.across] - first_across);
      tile_sizes[tiled.inner] = std::min(kTileEdge, sizes[tiled.inner] - first_inner);
      const auto start = [&](std::span<const int64_t> strides) {
        return first_across * strides[tiled.across] + first_inner * strides[tiled.inner];
      };
      map_elements_multiversioned(tile_sizes.span(), fn,
                                  Operand<Out>{out.data + start(out.strides), out.strides},
                                  Operand<const In>{in.data + start(in.strides), in.strides}...);
    }
  });
}

}  // namespace parallel_detail

// map_elements (see backplane/sdk/strided_loop.hpp), on several threads for large tensors:
// split along the flattened index when every operand is dense and row-major, in tiles when one
// operand's rows cross another's (a transpose), else along the outermost dimension.
template <typename Fn, typename Out, typename... In>
void parallel_map_elements(std::span<const int64_t> sizes, Fn&& fn, Operand<Out> out,
                           Operand<const In>... in) {
  int64_t count = 1;
  for (const int64_t size : sizes) count *= size;
  if (count < 2 * kElementsPerChunk) {  // the plain loop, without planning a split
    parallel_detail::map_elements_multiversioned(sizes, fn, out, in...);
  } else if (is_row_major(sizes, out.strides) && (is_row_major(sizes, in.strides) && ...)) {
    parallel_detail::map_split_dense(count, fn, out.data, in.data...);
  } else if (const auto tiled =
                 parallel_detail::crossing_dims(sizes, {out.strides, in.strides...})) {
    parallel_detail::map_split_tiles(sizes, count, *tiled, fn, out, in...);
  } else {
    parallel_detail::map_split_outermost(sizes, count, fn, out, in...);
  }
}

}  // namespace bp::cpu
