// Launches on host threads (emulated_launch.h): a block's threads meet at one barrier, a warp's
// lanes at another, and a shuffle is an exchange between two of the warp's barriers.
#include "emulated_launch.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace bp::cuda {
unsigned char* dynamic_shared = nullptr;
}  // namespace bp::cuda

namespace bp::cuda::emulated {
namespace {

constexpr int kWarpSize = 32;

struct Warp {
  explicit Warp(int lanes) : barrier(lanes) {}
  std::barrier<> barrier;
  std::array<unsigned int, kWarpSize> words{};
};

struct Block {
  explicit Block(int threads) : barrier(threads) {
    for (int first = 0; first < threads; first += kWarpSize) {
      warps.push_back(std::make_unique<Warp>(std::min(kWarpSize, threads - first)));
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

// The value `source_lane` of this warp hands in while this lane hands in `value`.
unsigned int exchange(unsigned int value, int source_lane) {
  Warp& warp = *current.warp;
  warp.words[current.lane] = value;
  warp.barrier.arrive_and_wait();
  const unsigned int result = warp.words[source_lane];
  warp.barrier.arrive_and_wait();
  return result;
}

}  // namespace

const ThreadPlace& this_thread() { return current.place; }

void launch(dim3 grid, dim3 block_dim, size_t dynamic_shared_bytes, const std::function<void()>& kernel) {
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
            current.warp = block.warps[static_cast<size_t>(t / kWarpSize)].get();
            current.lane = t % kWarpSize;
            kernel();
            // A thread that has returned no longer holds up the barriers of those still running.
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

void __syncthreads() { current.block->barrier.arrive_and_wait(); }

void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

unsigned int __shfl_xor_sync(unsigned int /*mask*/, unsigned int value, int lane_mask, int /*width*/) {
  return bp::cuda::emulated::exchange(value, current.lane ^ lane_mask);
}

unsigned int __shfl_sync(unsigned int /*mask*/, unsigned int value, int source_lane, int width) {
  return bp::cuda::emulated::exchange(value, current.lane / width * width + source_lane % width);
}

unsigned int atomicAdd(unsigned int* address, unsigned int value) {
  return std::atomic_ref<unsigned int>(*address).fetch_add(value);
}
