// Host-side helpers of the launches: error checks and launch shapes.
#include "kernels/cuda_call.h"
#include "kernels/groups.cuh"

#include <bit>

namespace bp::cuda {

void check_launch(std::string_view kernel) {
  check_cuda(cudaGetLastError(), "launching the CUDA kernel " + std::string(kernel));
}

size_t static_shared_memory(const void* kernel, std::string_view name) {
  cudaFuncAttributes attributes{};
  check_cuda(cudaFuncGetAttributes(&attributes, kernel),
             "reading the attributes of the CUDA kernel " + std::string(name));
  return attributes.sharedSizeBytes;
}

void allow_shared_memory(const void* kernel, size_t dynamic_bytes, size_t static_bytes,
                         size_t max_shared_memory, std::string_view name) {
  if (static_bytes + dynamic_bytes <= kDefaultSharedMemory) return;
  const size_t allowed = max_shared_memory - static_bytes;  // callers keep dynamic_bytes within it
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(allowed)),
             "allowing the CUDA kernel " + std::string(name) + " " + std::to_string(allowed) +
                 " bytes of dynamic shared memory beside its " + std::to_string(static_bytes) +
                 " static ones (" + std::to_string(dynamic_bytes) + " for this launch)");
}

namespace {

// Members one split handles at least: fewer would spend more on combining than on reading.
constexpr int64_t kMinMembersPerSplit = 16 * 1024;
constexpr int64_t kMaxSplits = 1024;

// Splits that give the device about two blocks per multiprocessor when there are fewer groups.
unsigned int splits_for(int64_t groups, int64_t group_size, int64_t groups_per_block,
                        const LaunchTarget& target) {
  const int64_t blocks = (groups + groups_per_block - 1) / groups_per_block;
  const int64_t wanted = 2 * static_cast<int64_t>(target.multiprocessors);
  if (groups == 0 || blocks >= wanted) return 1;
  int64_t splits = (wanted + blocks - 1) / blocks;
  splits = std::min(splits, group_size / kMinMembersPerSplit);
  splits = std::min(splits, kMaxSplits);
  return static_cast<unsigned int>(std::max<int64_t>(splits, 1));
}

}  // namespace

RowLayout row_layout(int64_t groups, int64_t group_size, int64_t members_per_thread,
                     unsigned int max_team, bool allow_splits, const LaunchTarget& target) {
  RowLayout layout;
  const int64_t wanted =
      std::max<int64_t>(1, (group_size + members_per_thread - 1) / members_per_thread);
  layout.team = static_cast<unsigned int>(
      std::bit_ceil(static_cast<uint64_t>(std::min<int64_t>(wanted, max_team))));
  layout.slots = std::max(1u, static_cast<unsigned int>(kGroupBlockThreads) / layout.team);
  if (allow_splits) {
    // A split layout has one group per block, so that a block's last split finishes that group
    // alone: splits count those blocks.
    layout.splits = splits_for(groups, group_size, 1, target);
    if (layout.splits > 1) {
      layout.slots = 1;
      // A bigger team reads the group faster.
      layout.team =
          std::max(layout.team, std::min(max_team, static_cast<unsigned int>(kGroupBlockThreads)));
    }
  }
  layout.blocks = grid_blocks(groups, layout.slots, target);
  if (layout.splits > 1)
    layout.blocks = static_cast<unsigned int>(groups);  // below 2 per multiprocessor
  return layout;
}

CachedRowLayout cached_row_layout(int64_t groups, int64_t group_size, size_t element_size,
                                  int64_t members_per_thread, size_t static_shared_bytes,
                                  const LaunchTarget& target) {
  CachedRowLayout layout;
  layout.rows = row_layout(groups, group_size, members_per_thread, kMaxTeamThreads, false, target);
  // A block's static and dynamic shared memory together stay within the device's limit.
  const size_t budget = target.max_shared_memory > static_shared_bytes
                            ? target.max_shared_memory - static_shared_bytes
                            : 0;
  const size_t row_bytes = static_cast<size_t>(group_size) * element_size;
  if (row_bytes == 0 || row_bytes > budget) return layout;
  // Whole warps per block: teams narrower than a warp come in multiples that fill one.
  const unsigned int step = std::max(1u, static_cast<unsigned int>(kWarpSize) / layout.rows.team);
  unsigned int slots =
      static_cast<unsigned int>(std::min<size_t>(layout.rows.slots, budget / row_bytes));
  slots -= slots % step;
  if (slots == 0) return layout;
  layout.rows.slots = slots;
  layout.rows.blocks = grid_blocks(groups, slots, target);
  layout.cached = true;
  layout.shared_bytes = row_bytes * slots;
  return layout;
}

CachedRowLayout prepare_cached_rows(const void* kernel, std::string_view name, int64_t groups,
                                    int64_t group_size, size_t element_size,
                                    int64_t members_per_thread, const LaunchTarget& target) {
  const size_t static_bytes = static_shared_memory(kernel, name);
  const CachedRowLayout layout =
      cached_row_layout(groups, group_size, element_size, members_per_thread, static_bytes, target);
  allow_shared_memory(kernel, layout.shared_bytes, static_bytes, target.max_shared_memory, name);
  return layout;
}

RegisterRowVariant register_row_variant(int64_t group_size, int vector_width) {
  if (group_size <= 0 || group_size % vector_width != 0) return {};
  const int64_t vectors = group_size / vector_width;
  if (vectors > int64_t{kMaxTeamThreads} * kRegisterRowVectors) return {};
  const int64_t team = (vectors + kRegisterRowVectors - 1) / kRegisterRowVectors;
  return {
      static_cast<int>(std::max<uint64_t>(kWarpSize, std::bit_ceil(static_cast<uint64_t>(team)))),
      kRegisterRowVectors};
}

unsigned int register_row_block_threads(const RegisterRowVariant& variant) {
  return static_cast<unsigned int>(variant.team == kWarpSize ? kRegisterRowWarpBlock
                                                             : variant.team);
}

unsigned int register_row_blocks(int64_t groups, const RegisterRowVariant& variant,
                                 const LaunchTarget& target) {
  const unsigned int threads = register_row_block_threads(variant);
  const int64_t rows_per_block = threads / static_cast<unsigned int>(variant.team);
  return grid_blocks(groups, rows_per_block, target, kMaxMultiprocessorThreads / threads);
}

RowLayout reduction_row_layout(int64_t groups, int64_t group_size, size_t element_size,
                               bool dense_members, int64_t members_per_thread,
                               const LaunchTarget& target) {
  const bool by_warp = element_size == 2 && dense_members &&
                       group_size >= int64_t{kWarpSize} * members_per_thread &&
                       groups >= int64_t{target.multiprocessors} * kWarpRowsPerMultiprocessor;
  if (!by_warp) {
    return row_layout(groups, group_size, members_per_thread, kMaxTeamThreads,
                      /*allow_splits=*/true, target);
  }
  RowLayout layout;
  layout.team = kWarpSize;
  layout.slots = kGroupBlockThreads / kWarpSize;
  layout.blocks = grid_blocks(groups, layout.slots, target);
  return layout;
}

unsigned int column_splits(int64_t groups, int64_t group_size, const LaunchTarget& target) {
  return splits_for(groups, group_size, kColumnGroups, target);
}

}  // namespace bp::cuda
