// Launches on host threads (emulated_launch.h): a block's threads meet at one barrier, a warp's
// lanes at another, and an exchange within a warp is a write between two of the warp's barriers.
#include "emulated_launch.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace bp::cuda {
unsigned char* dynamic_shared = nullptr;
}  // namespace bp::cuda

namespace bp::cuda::emulated {
namespace {

struct Warp {
  explicit Warp(int lanes) : lanes(lanes), barrier(lanes) {}
  const int lanes;
  std::atomic<int> returned{0};  // lanes whose kernel has returned
  std::barrier<> barrier;
  std::array<unsigned char, kMaxExchangedBytes * kWarpLanes> exchanged{};  // lane after lane
};

struct Block {
  explicit Block(int threads) : barrier(threads) {
    for (int first = 0; first < threads; first += kWarpLanes) {
      warps.push_back(std::make_unique<Warp>(std::min(kWarpLanes, threads - first)));
    }
  }
  std::barrier<> barrier;
  std::vector<std::unique_ptr<Warp>> warps;
};

struct ThreadState {
  ThreadPlace place{};
  Block* block = nullptr;
  Warp* warp = nullptr;
  int lane = 0;
};
thread_local ThreadState current;

}  // namespace

LaunchTarget small_device(int multiprocessors, size_t shared_memory) {
  LaunchTarget target;
  target.multiprocessors = multiprocessors;
  target.max_shared_memory = shared_memory;
  return target;
}

const ThreadPlace& this_thread() { return current.place; }

int this_lane() { return current.lane; }

namespace {

// The kernels' warp instructions name every lane (mask 0xffffffff): on a GPU, running one while
// a lane has returned, or in a block whose last warp is partial, is undefined. Here the barrier
// would let the remaining lanes through, so each meeting checks that all 32 came. The caller
// meets the lanes once more before any goes on (and may return), so that none is counted as
// returned by a lane still checking this meeting.
void meet_in_warp(Warp& warp, const char* instruction) {
  warp.barrier.arrive_and_wait();
  const int missing = kWarpLanes - warp.lanes + warp.returned.load();
  if (missing > 0) {
    std::fprintf(stderr,
                 "emulated launch: %s over the full mask with %d of the warp's 32 lanes missing "
                 "(returned, or past the block's threads): undefined on a GPU\n",
                 instruction, missing);
    std::abort();
  }
}

}  // namespace

void exchange_in_warp(const void* mine, size_t size, void* all) {
  Warp& warp = *current.warp;
  std::memcpy(warp.exchanged.data() + size * static_cast<size_t>(current.lane), mine, size);
  meet_in_warp(warp, "a warp shuffle");
  std::memcpy(all, warp.exchanged.data(), size * kWarpLanes);
  warp.barrier.arrive_and_wait();  // before the buffer is written again
}

void launch(dim3 grid, dim3 block_dim, size_t dynamic_shared_bytes,
            const std::function<void()>& kernel) {
  const auto threads = static_cast<int>(block_dim.x * block_dim.y * block_dim.z);
  // Shared memory starts as all ones bits, NaN in every floating type, so that reading what no
  // thread wrote shows in the results.
  std::vector<std::array<unsigned char, 16>> shared((dynamic_shared_bytes + 15) / 16);
  for (unsigned int z = 0; z < grid.z; ++z) {
    for (unsigned int y = 0; y < grid.y; ++y) {
      for (unsigned int x = 0; x < grid.x; ++x) {
        std::memset(shared.data(), 0xFF, shared.size() * 16);
        dynamic_shared = reinterpret_cast<unsigned char*>(shared.data());
        Block block(threads);
        std::vector<std::jthread> pool;
        for (int t = 0; t < threads; ++t) {
          pool.emplace_back([&, t] {
            const auto index = static_cast<unsigned int>(t);
            current.place = {uint3{index % block_dim.x, index / block_dim.x % block_dim.y,
                                   index / (block_dim.x * block_dim.y)},
                             uint3{x, y, z}, block_dim, grid};
            current.block = &block;
            current.warp = block.warps[static_cast<size_t>(t / kWarpLanes)].get();
            current.lane = t % kWarpLanes;
            kernel();
            // A thread that has returned no longer holds up the barriers of those still running.
            current.warp->returned.fetch_add(1);
            current.warp->barrier.arrive_and_drop();
            block.barrier.arrive_and_drop();
          });
        }
      }
    }
  }
  dynamic_shared = nullptr;
}

}  // namespace bp::cuda::emulated

using bp::cuda::emulated::current;
using bp::cuda::emulated::gather_warp;

void __syncthreads() { current.block->barrier.arrive_and_wait(); }

void __syncwarp() {
  bp::cuda::emulated::meet_in_warp(*current.warp, "__syncwarp");
  current.warp->barrier.arrive_and_wait();
}

void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

unsigned int __shfl_xor_sync(unsigned int /*mask*/, unsigned int value, int lane_mask, int width) {
  // A lane mask reaching past the segment of `width` lanes reads another segment's lanes or the
  // lane's own value, by rules the kernels do not rely on.
  if (lane_mask >= width) {
    std::fprintf(stderr,
                 "emulated launch: __shfl_xor_sync with lane mask %d over segments of %d lanes\n",
                 lane_mask, width);
    std::abort();
  }
  return gather_warp(value)[static_cast<size_t>(current.lane ^ lane_mask)];
}

unsigned int __shfl_sync(unsigned int /*mask*/, unsigned int value, int source_lane, int width) {
  return gather_warp(
      value)[static_cast<size_t>(current.lane / width * width + source_lane % width)];
}

unsigned int atomicAdd(unsigned int* address, unsigned int value) {
  return std::atomic_ref<unsigned int>(*address).fetch_add(value);
}

unsigned long long atomicMin(unsigned long long* address, unsigned long long value) {
  std::atomic_ref<unsigned long long> target(*address);
  unsigned long long seen = target.load();
  while (value < seen && !target.compare_exchange_weak(seen, value)) {
  }
  return seen;
}
