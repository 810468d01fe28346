// The fused attention kernel's program (attention_block.h) run on the host in an emulated launch
// (emulated_launch.h), the warp's instructions emulated as the PTX ISA defines them (ldmatrix,
// mma.sync m16n8k16, shuffles), against attention computed in double. The asynchronous copies land
// as late as the kernel allows, at the wait that covers them, so that reading a tile before its
// wait shows. This checks the fragment layouts, the masks, the online softmax and the staging of
// out without a GPU, though not the speed or the instructions themselves.
#include "emulated_launch.h"

#include "cuda_test_support.h"
#include "kernels/attention_block.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

namespace {

using bp::cuda::AttentionShape;
using bp::cuda::kAttentionKey;
using bp::cuda::kAttentionOut;
using bp::cuda::kAttentionQuery;
using bp::cuda::kAttentionQueryBlock;
using bp::cuda::kAttentionThreads;
using bp::cuda::kAttentionValue;
using bp::cuda::kWarpSize;
using bp::cuda::emulated::gather_warp;
using bp::cuda::emulated::launch;
using bp::cuda::emulated::this_lane;

// The 16-bit input types as bits, with their conversions (round to nearest even).
struct BFloat16 {
  uint16_t bits;
  static float to_float(uint16_t bits) {
    const uint32_t word = uint32_t{bits} << 16;
    float value;
    std::memcpy(&value, &word, sizeof(value));
    return value;
  }
  static uint16_t from_float(float value) {
    uint32_t word;
    std::memcpy(&word, &value, sizeof(word));
    if (std::isnan(value)) return 0x7FC0;
    return static_cast<uint16_t>((word + 0x7FFF + (word >> 16 & 1)) >> 16);
  }
  static constexpr double kTolerance = 2e-2;
};

struct Float16 {
  uint16_t bits;
  static float to_float(uint16_t bits) {
    _Float16 value;
    std::memcpy(&value, &bits, sizeof(value));
    return static_cast<float>(value);
  }
  static uint16_t from_float(float value) {
    const auto half = static_cast<_Float16>(value);
    uint16_t bits;
    std::memcpy(&bits, &half, sizeof(bits));
    return bits;
  }
  static constexpr double kTolerance = 4e-3;
};

uint16_t low_half(uint32_t r) { return static_cast<uint16_t>(r & 0xFFFF); }
uint16_t high_half(uint32_t r) { return static_cast<uint16_t>(r >> 16); }
uint32_t pack(uint16_t low, uint16_t high) { return uint32_t{low} | uint32_t{high} << 16; }
uint16_t element_at(const void* address, int index) {
  uint16_t bits;
  std::memcpy(&bits, static_cast<const uint16_t*>(address) + index, sizeof(bits));
  return bits;
}

struct PendingCopy {
  void* shared;
  const void* global;
  bool inside;
};

// What one lane hands the others for an mma.
struct MmaOperands {
  uint32_t a[4];
  uint32_t b[2];
};

// This thread's lane, for attend_query_block, in an emulated launch.
template <typename T>
class HostLane {
 public:
  int thread() const { return static_cast<int>(threadIdx.x); }

  void copy_async(void* shared, const void* global, bool inside) {
    issued_.push_back({shared, global, inside});
  }
  void commit_copies() {
    committed_.push_back(std::move(issued_));
    issued_.clear();
  }
  // Lands every committed group but the latest, which stays in flight.
  void wait_copies_but_latest() {
    for (size_t g = 0; g + 1 < committed_.size(); ++g) {
      for (const PendingCopy& copy : committed_[g]) {
        if (copy.inside) {
          std::memcpy(copy.shared, copy.global, 16);
        } else {
          std::memset(copy.shared, 0, 16);
        }
      }
    }
    if (!committed_.empty()) committed_.erase(committed_.begin(), committed_.end() - 1);
  }

  void sync_block() { __syncthreads(); }
  void sync_warp() { __syncwarp(); }

  void load_matrices(uint32_t (&r)[4], const void* row) {
    const auto rows = gather_warp(row);
    const int lane = this_lane();
    for (int i = 0; i < 4; ++i) {
      const void* matrix_row = rows[static_cast<size_t>(8 * i + lane / 4)];
      r[i] =
          pack(element_at(matrix_row, 2 * (lane % 4)), element_at(matrix_row, 2 * (lane % 4) + 1));
    }
  }
  void load_matrices_transposed(uint32_t (&r)[4], const void* row) {
    const auto rows = gather_warp(row);
    const int lane = this_lane();
    for (int i = 0; i < 4; ++i) {
      r[i] = pack(element_at(rows[static_cast<size_t>(8 * i + 2 * (lane % 4))], lane / 4),
                  element_at(rows[static_cast<size_t>(8 * i + 2 * (lane % 4) + 1)], lane / 4));
    }
  }

  void multiply_accumulate(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    const auto operands = gather_warp(MmaOperands{{a[0], a[1], a[2], a[3]}, {b0, b1}});
    const int g = this_lane() / 4, t = this_lane() % 4;
    for (int e = 0; e < 4; ++e) {
      const int row = g + e / 2 * 8, column = 2 * t + e % 2;
      float sum = 0;
      for (int k = 0; k < 16; ++k)
        sum += a_element(operands, row, k) * b_element(operands, k, column);
      d[e] += sum;
    }
  }

  float shuffle_xor(float value, int lane_mask) {
    return gather_warp(value)[static_cast<size_t>(this_lane() ^ lane_mask)];
  }

  uint32_t pack_pair(float low, float high) const {
    return pack(T::from_float(low), T::from_float(high));
  }

  void copy_vector(T* to, const T* from) const { std::memcpy(to, from, 16); }

 private:
  using Operands = std::array<MmaOperands, kWarpSize>;
  // A's element (row, k): lane 4 (row % 8) + (k % 8) / 2, register (row / 8) + 2 (k / 8).
  static float a_element(const Operands& operands, int row, int k) {
    const uint32_t r =
        operands[static_cast<size_t>(4 * (row % 8) + k % 8 / 2)].a[row / 8 + 2 * (k / 8)];
    return T::to_float(k % 2 == 0 ? low_half(r) : high_half(r));
  }
  // B's element (k, column): lane 4 column + (k % 8) / 2, register k / 8.
  static float b_element(const Operands& operands, int k, int column) {
    const uint32_t r = operands[static_cast<size_t>(4 * column + k % 8 / 2)].b[k / 8];
    return T::to_float(k % 2 == 0 ? low_half(r) : high_half(r));
  }

  std::vector<PendingCopy> issued_;
  std::vector<std::vector<PendingCopy>> committed_;
};

// One (batch, L, E) problem per batch index, each operand's rows `pitch` elements apart and its
// problems `batch_step` rows apart.
struct Problem {
  int64_t batches, query_length, key_length;
  bool causal;
  float scale;
  int64_t pitch_extra = 0;  // elements between rows beyond E (a multiple of 8)
};

template <typename T, int HeadDim>
void check_attention(const Problem& p) {
  INFO("head dim " << HeadDim << ", " << p.batches << " problems, L " << p.query_length << ", S "
                   << p.key_length << (p.causal ? ", causal" : "") << ", scale " << p.scale
                   << ", row pitch E + " << p.pitch_extra);
  const int64_t pitch = HeadDim + p.pitch_extra;
  const int64_t lengths[4] = {p.query_length, p.key_length, p.key_length, p.query_length};
  std::mt19937 random(5);
  std::normal_distribution<float> normal(0, 1);
  std::vector<std::vector<uint16_t>> operands(4);
  AttentionShape shape;
  shape.batches = p.batches;
  shape.query_length = p.query_length;
  shape.key_length = p.key_length;
  shape.head_dim = HeadDim;
  shape.causal = p.causal;
  shape.batch_offsets.ndim = 1;
  shape.batch_offsets.sizes[0] = p.batches;
  shape.batch_offsets.divisors[0] = bp::cuda::FastDivmod(static_cast<uint32_t>(p.batches));
  for (int k = 0; k < 4; ++k) {
    const int64_t problem_elements = std::max<int64_t>(lengths[k], 1) * pitch;
    // Out's elements are NaN until written, so that a row left unwritten shows.
    operands[k].resize(static_cast<size_t>(p.batches * problem_elements));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (uint16_t& bits : operands[k])
      bits = T::from_float(k == kAttentionOut ? nan : normal(random));
    shape.row_strides[k] = pitch;
    shape.batch_offsets.strides[k][0] = problem_elements;
  }

  const auto query_blocks =
      static_cast<uint32_t>((p.query_length + kAttentionQueryBlock - 1) / kAttentionQueryBlock);
  const auto data = [&](int k) { return reinterpret_cast<T*>(operands[k].data()); };
  launch(dim3(query_blocks * static_cast<uint32_t>(p.batches)), dim3(kAttentionThreads),
         bp::cuda::kAttentionSharedBytes<T, HeadDim>, [&] {
           HostLane<T> lane;
           bp::cuda::attend_query_block<T, HeadDim>(
               lane, shape, data(kAttentionQuery), data(kAttentionKey), data(kAttentionValue),
               data(kAttentionOut), p.scale * std::numbers::log2e_v<float>, blockIdx.x,
               reinterpret_cast<T*>(bp::cuda::dynamic_shared));
         });

  const auto at = [&](int k, int64_t batch, int64_t row, int64_t column) {
    return static_cast<double>(T::to_float(operands[k][static_cast<size_t>(
        batch * shape.batch_offsets.strides[k][0] + row * pitch + column)]));
  };
  for (int64_t batch = 0; batch < p.batches; ++batch) {
    for (int64_t i = 0; i < p.query_length; ++i) {
      const int64_t keys = p.causal ? std::min(i + 1, p.key_length) : p.key_length;
      std::vector<double> weights(static_cast<size_t>(keys));
      double top = -std::numeric_limits<double>::infinity(), total = 0;
      for (int64_t j = 0; j < keys; ++j) {
        double score = 0;
        for (int c = 0; c < HeadDim; ++c)
          score += at(kAttentionQuery, batch, i, c) * at(kAttentionKey, batch, j, c);
        weights[static_cast<size_t>(j)] = score * p.scale;
        top = std::max(top, score * p.scale);
      }
      for (double& w : weights) total += (w = std::exp(w - top));
      for (int c = 0; c < HeadDim; ++c) {
        double expected = 0;
        for (int64_t j = 0; j < keys; ++j) {
          expected += weights[static_cast<size_t>(j)] * at(kAttentionValue, batch, j, c);
        }
        if (keys > 0) expected /= total;
        const double actual = at(kAttentionOut, batch, i, c);
        INFO("problem " << batch << ", row " << i << ", column " << c);
        REQUIRE(std::abs(actual - expected) <= T::kTolerance * (1 + std::abs(expected)));
      }
    }
  }
  // The pitch's padding between rows is not written.
  for (int64_t batch = 0; batch < p.batches; ++batch) {
    for (int64_t i = 0; i < p.query_length; ++i) {
      for (int64_t c = HeadDim; c < pitch; ++c) REQUIRE(std::isnan(at(kAttentionOut, batch, i, c)));
    }
  }
}

// Rows and keys past whole blocks of 64, a causal diagonal inside key blocks, L above and below S.
const std::vector<Problem> kProblems = {
    {2, 70, 130, false, 0.125f},
    {1, 130, 70, true, 0.125f, 8},
    {1, 100, 100, true, 0.09f},
    {1, 5, 200, false, -0.3f, 16},
};

TEST_CASE("fused attention's block program, emulated on the host: bfloat16, head size 64") {
  for (const Problem& p : kProblems) check_attention<BFloat16, 64>(p);
}

TEST_CASE("fused attention's block program, emulated on the host: float16, head size 128") {
  for (const Problem& p : kProblems) check_attention<Float16, 128>(p);
}

TEST_CASE("fused attention's block program, emulated on the host: no keys give zeros") {
  check_attention<BFloat16, 64>({2, 20, 0, false, 0.125f});
  check_attention<Float16, 128>({1, 70, 0, true, 0.125f});
}

}  // namespace
