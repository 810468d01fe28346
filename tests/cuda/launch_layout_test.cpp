// How group kernels' launches are shaped, checked on the host (the rules are plain host code):
// over a sweep of group counts, group sizes, element sizes and devices, every layout launches
// (teams of a power of two, blocks of whole warps within the thread limit, shared memory within
// the device's), and the layouts make the choices the kernels count on.
#include "cuda_test_support.h"

#include "kernels/launch_layout.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using bp::cuda::CachedRowLayout;
using bp::cuda::kGroupBlockThreads;
using bp::cuda::kMaxTeamThreads;
using bp::cuda::kWarpSize;
using bp::cuda::LaunchTarget;
using bp::cuda::RowLayout;

// An H100 (132 multiprocessors, 227 KB of shared memory a block may opt in to), and a small GPU
// without the opt-in.
LaunchTarget device(int multiprocessors, size_t max_shared_memory) {
  LaunchTarget target;
  target.multiprocessors = multiprocessors;
  target.max_shared_memory = max_shared_memory;
  return target;
}
const LaunchTarget kTargets[] = {device(132, 227 * 1024), device(2, 48 * 1024)};

const int64_t kGroupCounts[] = {1, 2, 7, 31, 263, 1000, 100000, int64_t{1} << 24};
const int64_t kGroupSizes[] = {
    1, 3, 16, 31, 100, 1024, 4097, 12288, 65536, 1 << 20, int64_t{1} << 26};

int64_t blocks_needed(int64_t groups, unsigned int slots) { return (groups + slots - 1) / slots; }

// What every row layout must be, whatever it chose.
void check_launchable(const RowLayout& layout, int64_t groups) {
  CHECK(std::has_single_bit(layout.team));
  CHECK(layout.team <= static_cast<unsigned int>(kMaxTeamThreads));
  const unsigned int threads = layout.team * layout.slots;
  CHECK(threads % kWarpSize == 0);
  CHECK(threads <= static_cast<unsigned int>(kMaxTeamThreads));
  CHECK(layout.blocks >= 1);
  CHECK(layout.blocks <= std::max<int64_t>(1, blocks_needed(groups, layout.slots)));
  CHECK(layout.splits >= 1);
}

TEST_CASE("row layouts launch for any groups, and split only a few long groups") {
  for (const LaunchTarget& target : kTargets) {
    for (const int64_t groups : kGroupCounts) {
      for (const int64_t size : kGroupSizes) {
        for (const bool allow_splits : {false, true}) {
          for (const unsigned int max_team : {32u, 512u}) {
            INFO(target.multiprocessors << " multiprocessors, " << groups << " groups of " << size
                                        << (allow_splits ? ", splits allowed" : "")
                                        << ", teams up to " << max_team);
            const RowLayout layout =
                bp::cuda::row_layout(groups, size, 16, max_team, allow_splits, target);
            check_launchable(layout, groups);
            CHECK(layout.team <= max_team);
            // The team reaches about 16 members a thread, or its cap.
            CHECK(layout.team >= std::min<int64_t>(max_team, (size + 15) / 16));
            if (layout.splits == 1) continue;
            CHECK(allow_splits);
            CHECK(layout.slots == 1);
            CHECK(layout.blocks == groups);
            CHECK(groups < 2 * target.multiprocessors);
            CHECK(size / layout.splits >= 16 * 1024);
            CHECK(layout.splits <= 1024);
          }
        }
      }
    }
  }
  // One long row on a big device is split; as many rows as multiprocessors are not.
  CHECK(bp::cuda::row_layout(1, 1 << 24, 16, 512, true, kTargets[0]).splits > 1);
  CHECK(bp::cuda::row_layout(264, 1 << 24, 16, 512, true, kTargets[0]).splits == 1);
  // Short rows share a block: teams of 2 threads, 128 rows a block.
  const RowLayout short_rows = bp::cuda::row_layout(100000, 31, 16, 512, false, kTargets[0]);
  CHECK(short_rows.team == 2);
  CHECK(short_rows.slots == kGroupBlockThreads / 2);
}

TEST_CASE(
    "softmax and norm teams are sized by the bytes each thread reads, reduction teams by its "
    "members") {
  using bp::cuda::kRowBytesPerThread;
  using bp::cuda::members_per_thread;
  const LaunchTarget& h200 = kTargets[0];
  // Four 16-byte vectors a thread: 8192 floats take 512 threads, 8192 bfloat16 256, and rows of
  // 4096 bfloat16 two teams of 128 to a block.
  CHECK(
      bp::cuda::row_layout(8192, 8192, members_per_thread(kRowBytesPerThread, 4), 512, false, h200)
          .team == 512);
  CHECK(
      bp::cuda::row_layout(8192, 8192, members_per_thread(kRowBytesPerThread, 2), 512, false, h200)
          .team == 256);
  const RowLayout short_rows = bp::cuda::row_layout(
      32768, 4096, members_per_thread(kRowBytesPerThread, 2), 512, false, h200);
  CHECK(short_rows.team == 128);
  CHECK(short_rows.slots == 2);
  // A reduction's thread reads 32 members of any size: 8192 bfloat16 take a team of 256.
  CHECK(bp::cuda::row_layout(8192, 8192, bp::cuda::kReductionMembersPerThread, 512, true, h200)
            .team == 256);
}

TEST_CASE(
    "cached row layouts keep a row in shared memory exactly when it fits beside the kernel's own") {
  for (const LaunchTarget& target : kTargets) {
    for (const int64_t groups : kGroupCounts) {
      for (const int64_t size : kGroupSizes) {
        for (const size_t element_size : {size_t{2}, size_t{4}, size_t{8}}) {
          for (const size_t static_bytes : {size_t{0}, size_t{384}, size_t{16 * 1024}}) {
            INFO(target.multiprocessors << " multiprocessors, " << groups << " groups of " << size
                                        << " x " << element_size << " bytes beside " << static_bytes
                                        << " static");
            const CachedRowLayout layout =
                bp::cuda::cached_row_layout(groups, size, element_size, 16, static_bytes, target);
            check_launchable(layout.rows, groups);
            CHECK(layout.rows.splits == 1);
            const size_t row_bytes = static_cast<size_t>(size) * element_size;
            const size_t budget = target.max_shared_memory - static_bytes;
            if (layout.cached) {
              CHECK(layout.shared_bytes == row_bytes * layout.rows.slots);
              CHECK(layout.shared_bytes <= budget);
            } else {
              CHECK(layout.shared_bytes == 0);
              // Not even the teams of one warp fit.
              const size_t teams_per_warp = std::max<size_t>(1, kWarpSize / layout.rows.team);
              CHECK(row_bytes * teams_per_warp > budget);
            }
          }
        }
      }
    }
  }
  // A float32 row of GPT-3's hidden size (12288 members, 48 KB) beside a kernel's 384 static bytes
  // is cached on an H100, past what a kernel gets without opting in.
  const CachedRowLayout gpt3 = bp::cuda::cached_row_layout(1000, 12288, 4, 16, 384, kTargets[0]);
  CHECK(gpt3.cached);
  CHECK(gpt3.shared_bytes + 384 > bp::cuda::kDefaultSharedMemory);
  CHECK_FALSE(bp::cuda::cached_row_layout(1000, 12288, 4, 16, 384, kTargets[1]).cached);
}

TEST_CASE("column layouts split only when their blocks leave the device idle") {
  for (const LaunchTarget& target : kTargets) {
    for (const int64_t groups : kGroupCounts) {
      for (const int64_t size : kGroupSizes) {
        INFO(target.multiprocessors << " multiprocessors, " << groups << " columns of " << size);
        const unsigned int splits = bp::cuda::column_splits(groups, size, target);
        CHECK(splits >= 1);
        CHECK(splits <= 1024);
        if (splits > 1) {
          CHECK(blocks_needed(groups, bp::cuda::kColumnGroups) < 2 * target.multiprocessors);
          CHECK(size / splits >= 16 * 1024);
        }
      }
    }
  }
  CHECK(bp::cuda::column_splits(32, 1 << 24, kTargets[0]) > 1);
}

}  // namespace

TEST_CASE("register rows: the narrowest team holding four vectors a thread, and no more") {
  using bp::cuda::register_row_variant;
  // float32 rows, 4 members a vector.
  CHECK(register_row_variant(4, 4).team == kWarpSize);
  CHECK(register_row_variant(512, 4).team == kWarpSize);
  CHECK(register_row_variant(516, 4).team == 64);
  CHECK(register_row_variant(4096, 4).team == 256);
  CHECK(register_row_variant(8192, 4).team == kMaxTeamThreads);
  CHECK(register_row_variant(8192, 4).vectors == bp::cuda::kRegisterRowVectors);
  // 16-bit rows hold twice the members in the same teams.
  CHECK(register_row_variant(8192, 8).team == 256);
  CHECK(register_row_variant(16384, 8).team == kMaxTeamThreads);
  for (const auto& [size, width] :
       {std::pair<int64_t, int>{0, 4}, {8196, 4}, {16392, 8}, {4098, 2}, {1025, 4}, {12, 8}}) {
    INFO(size << " members, " << width << " a vector");
    CHECK(register_row_variant(size, width).team == 0);
  }
  for (const LaunchTarget& target : kTargets) {
    for (const int64_t groups : kGroupCounts) {
      for (const int64_t size : {int64_t{64}, int64_t{1000}, int64_t{8192}}) {
        const bp::cuda::RegisterRowVariant variant = register_row_variant(size, 4);
        const unsigned int threads = bp::cuda::register_row_block_threads(variant);
        CHECK(threads % kWarpSize == 0);
        CHECK(threads <= static_cast<unsigned int>(kMaxTeamThreads));
        // A team wider than a warp synchronises its block, so it is the block.
        if (variant.team > kWarpSize) CHECK(threads == static_cast<unsigned int>(variant.team));
        const unsigned int blocks = bp::cuda::register_row_blocks(groups, variant, target);
        CHECK(blocks >= 1);
        CHECK(blocks <= blocks_needed(groups, threads / static_cast<unsigned int>(variant.team)));
      }
    }
  }
}

TEST_CASE("reductions over many long dense 16-bit rows take a warp a row, others row_layout") {
  const LaunchTarget target = kTargets[0];
  const int64_t many = int64_t{target.multiprocessors} * bp::cuda::kWarpRowsPerMultiprocessor;
  const RowLayout warp = bp::cuda::reduction_row_layout(many, 1024, 2, true, 32, target);
  CHECK(warp.team == static_cast<unsigned int>(kWarpSize));
  CHECK(warp.team * warp.slots == static_cast<unsigned int>(kGroupBlockThreads));
  CHECK(warp.splits == 1);
  // float32, strided, short or few rows: the team layout.
  for (const auto& [groups, size, element, dense] :
       {std::tuple<int64_t, int64_t, size_t, bool>{many, 1024, 4, true},
        {many, 1024, 2, false},
        {many, 1023, 2, true},
        {many - 1, 1024, 2, true}}) {
    const RowLayout rows = bp::cuda::reduction_row_layout(groups, size, element, dense, 32, target);
    const RowLayout expected =
        bp::cuda::row_layout(groups, size, 32, kMaxTeamThreads, true, target);
    CHECK(rows.team == expected.team);
    CHECK(rows.slots == expected.slots);
    CHECK(rows.splits == expected.splits);
  }
}
