// How launches are shaped: block and grid sizes, and the shared memory a block may use. Plain
// host code (launch_support.cu defines the functions), so that the rules are tested on machines
// without a GPU (tests/cuda/launch_layout_test.cpp).
#pragma once

#include "kernels/launch.h"

#include <cstddef>
#include <cstdint>

namespace bp::cuda {

inline constexpr int kWarpSize = 32;
// Threads of a team (and of a block of teams) at most, so that team kernels may use up to 128
// registers per thread (their launch bounds) and still launch.
inline constexpr int kMaxTeamThreads = 512;
// Threads of a group kernel's block; the column layout's groups per block, and threads per group.
inline constexpr int kGroupBlockThreads = 256;
inline constexpr int kColumnGroups = 32;
inline constexpr int kColumnSlices = 8;
// Threads a multiprocessor holds at once (compute capability 8.0 and 9.0).
inline constexpr int kMaxMultiprocessorThreads = 2048;

// Bytes of a group each thread of a softmax or norm team reads, about: four 16-byte vectors.
// These teams are sized by bytes, not members, so that a 16-bit row gets as many vectors per
// thread as a float32 one, in half the team.
inline constexpr int64_t kRowBytesPerThread = 64;
// Members each thread of a reduction team reads, whatever their size: sized by bytes, as the
// softmax and norm teams are, the reductions sum 16-bit rows more slowly.
inline constexpr int64_t kReductionMembersPerThread = 32;

// The members per thread that make `bytes_per_thread` of `element_size`-byte members.
inline constexpr int64_t members_per_thread(int64_t bytes_per_thread, size_t element_size) {
  return bytes_per_thread / static_cast<int64_t>(element_size);
}

// What every kernel may use without opting in: static and dynamic shared memory together.
inline constexpr size_t kDefaultSharedMemory = 48 * 1024;

// Blocks for `work` items of `per_block` each: enough to fill the device several times over,
// never more than the work needs (grid-stride loops cover the rest).
inline unsigned int grid_blocks(int64_t work, int64_t per_block, const LaunchTarget& target,
                                int64_t blocks_per_multiprocessor = 32) {
  const int64_t needed = (work + per_block - 1) / per_block;
  const int64_t cap = static_cast<int64_t>(target.multiprocessors) * blocks_per_multiprocessor;
  const int64_t blocks = needed < cap ? needed : cap;
  return static_cast<unsigned int>(blocks < 1 ? 1 : blocks);
}

// A grid of one block per tile: x_tiles along x (at most 2^31 - 1), y_tiles along y and z along
// z (at most 65535 each). Kernels walk whatever lies past those limits grid-stride.
inline dim3 tile_grid(int64_t x_tiles, int64_t y_tiles, int64_t z) {
  constexpr int64_t kMaxGridX = INT32_MAX, kMaxGridYZ = 65535;
  return dim3(static_cast<unsigned int>(x_tiles < kMaxGridX ? x_tiles : kMaxGridX),
              static_cast<unsigned int>(y_tiles < kMaxGridYZ ? y_tiles : kMaxGridYZ),
              static_cast<unsigned int>(z < kMaxGridYZ ? z : kMaxGridYZ));
}

// How a row-layout launch is shaped.
struct RowLayout {
  unsigned int team = 1;    // threads per group (blockDim.x)
  unsigned int slots = 1;   // groups per block (blockDim.y)
  unsigned int blocks = 1;  // gridDim.x
  unsigned int splits = 1;  // gridDim.y
};

// A team big enough that each thread handles about `members_per_thread` members (at most
// `max_team`, a power of two up to kMaxTeamThreads), and enough teams per block to fill
// kGroupBlockThreads. Blocks always hold whole warps. Splits only where `allow_splits` and the
// groups are too few to fill the device, each of at least 16 Ki members.
RowLayout row_layout(int64_t groups, int64_t group_size, int64_t members_per_thread,
                     unsigned int max_team, bool allow_splits, const LaunchTarget& target);

// A row layout without splits whose teams keep their group's members in shared memory, so that
// the input is read once, when a group of `element_size`-byte members fits (`cached`) beside
// the kernel's `static_shared_bytes`; fewer teams per block if that makes them fit.
struct CachedRowLayout {
  RowLayout rows;
  bool cached = false;
  size_t shared_bytes = 0;  // dynamic shared memory per block
};
CachedRowLayout cached_row_layout(int64_t groups, int64_t group_size, size_t element_size,
                                  int64_t members_per_thread, size_t static_shared_bytes,
                                  const LaunchTarget& target);

// Row kernels that keep a row in registers (register_rows.cuh): `team` threads per row, each
// holding up to `vectors` 16-byte vectors of it, the vectors of a row dealt round the team.
// Teams of a warp share blocks of kRegisterRowWarpBlock threads, a row per warp and no barrier;
// wider teams are a block each. team 0: no variant holds the row.
struct RegisterRowVariant {
  int team = 0;
  int vectors = 0;
};
inline constexpr int kRegisterRowWarpBlock = 256;
// Vectors each thread holds: eight (rows of twice the length) spilled to local memory in
// 16-bit and float64 rows, and in layer norm's float32 rows, beside the next row's loads.
inline constexpr int kRegisterRowVectors = 4;

// The variant for rows of `group_size` members, `vector_width` to a 16-byte vector: the
// narrowest team, a warp at least, whose threads hold kRegisterRowVectors, up to
// kMaxTeamThreads. None where the row is empty, not whole vectors, or longer (rows of up to
// 8192 float32, 16384 16-bit and 4096 float64 members).
RegisterRowVariant register_row_variant(int64_t group_size, int vector_width);

// Threads of a block of `variant`, and its blocks for `groups` rows: as many as the device holds
// at once, or as the rows need, each then walking the rows grid-stride.
unsigned int register_row_block_threads(const RegisterRowVariant& variant);
unsigned int register_row_blocks(int64_t groups, const RegisterRowVariant& variant,
                                 const LaunchTarget& target);

// How a reduction over rows of `element_size`-byte members is laid out: a warp per row for
// 16-bit rows that are dense, long (`members_per_thread` a lane at least) and many enough to
// fill the device, so that no barrier stands between one row and the next; else row_layout with
// `members_per_thread` and splits allowed.
inline constexpr int64_t kWarpRowsPerMultiprocessor = 32;
RowLayout reduction_row_layout(int64_t groups, int64_t group_size, size_t element_size,
                               bool dense_members, int64_t members_per_thread,
                               const LaunchTarget& target);

// The splits of a column-layout launch (gridDim.y).
unsigned int column_splits(int64_t groups, int64_t group_size, const LaunchTarget& target);

}  // namespace bp::cuda
