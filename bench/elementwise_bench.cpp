// The CPU backend's large memory-bound kernels against memcpy, in one run, so that "how close to
// memory bandwidth" reads as a ratio of bytes_per_second. Run it with BACKPLANE_NUM_THREADS=1
// and =2 to compare thread counts; see bench/README.md.
//
// Bytes processed count what each kernel must read and write once, at least:
//   add, mul: two 64 MB inputs read, one 64 MB output written (192 MB);
//   where: those and a 16 MB condition (208 MB);
//   index_select of every other column: 32 MB read (every other element), 32 MB written;
//   relu, tanh, sqrt, log, gelu (exact and tanh), a transposed copy, softmax (over rows or
//   columns), log_softmax, layer_norm (of x or of its transpose), rms_norm, memcpy: 64 MB read, 64
//   MB written
//     (128 MB; layer norm's weight, bias, mean and rstd add 64 KB, rms norm's weight 16 KB);
//   sum over either dim, and amax over columns, of 4096 x 4096: 64 MB read, 16 KB written;
//   argmax over rows: 64 MB read, 32 KB written.
// memcpy runs on one thread, and on two (each copying half): what a second thread can add on
// this machine's memory.
#include <backplane/backplane.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kElements = int64_t{16} << 20;
constexpr int64_t kBytes = kElements * sizeof(float);
// The same elements as a square matrix, for the per-row and per-column kernels.
constexpr int64_t kSide = 4096;
static_assert(kSide * kSide == kElements);
constexpr int64_t kRowBytes = kSide * sizeof(float);

using KernelCall = std::function<void(bp::Tensor& out, const bp::Tensor& a, const bp::Tensor& b)>;

// Times `op` writing into a preallocated output, so that the kernel rather than the allocator
// is measured.
void run_kernel(benchmark::State& state, int operand_count, const KernelCall& op) {
  const bp::Tensor a = bp::arange(kElements, bp::kFloat32).sub(kElements / 2);
  const bp::Tensor b = bp::ones({kElements});
  bp::Tensor out = bp::empty({kElements});
  for (auto _ : state) {
    op(out, a, b);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes * (operand_count + 1));
}

void BM_add_16M(benchmark::State& state) {
  run_kernel(state, 2, [](bp::Tensor& out, const bp::Tensor& a, const bp::Tensor& b) {
    bp::add_out(out, a, b);
  });
}
BENCHMARK(BM_add_16M)->UseRealTime();

void BM_mul_16M(benchmark::State& state) {
  run_kernel(state, 2, [](bp::Tensor& out, const bp::Tensor& a, const bp::Tensor& b) {
    bp::mul_out(out, a, b);
  });
}
BENCHMARK(BM_mul_16M)->UseRealTime();

void BM_relu_16M(benchmark::State& state) {
  run_kernel(state, 1,
             [](bp::Tensor& out, const bp::Tensor& a, const bp::Tensor&) { bp::relu_out(out, a); });
}
BENCHMARK(BM_relu_16M)->UseRealTime();

// where(a < 0, a, b) with a condition as random as a's signs (randn), given in advance.
void BM_where_16M(benchmark::State& state) {
  const bp::Tensor a = bp::randn({kElements}), b = bp::ones({kElements});
  const bp::Tensor condition = bp::lt(a, 0);
  bp::Tensor out = bp::empty({kElements});
  for (auto _ : state) {
    bp::where_out(out, condition, a, b);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * (kBytes * 3 + kElements));
}
BENCHMARK(BM_where_16M)->UseRealTime();

// A 4096 x 4096 float32 matrix of values in [-4, 4), different in every row and column.
bp::Tensor square_input() {
  return bp::arange(kElements, bp::kFloat32).mul(8.0 / kElements).sub(4).view({kSide, kSide});
}

// Functions whose arithmetic, not memory, may set the pace: on values in [-4, 4), where tanh
// has not yet saturated.
void run_activation(benchmark::State& state,
                    const std::function<void(bp::Tensor&, const bp::Tensor&)>& op) {
  const bp::Tensor a = square_input().view({kElements});
  bp::Tensor out = bp::empty({kElements});
  for (auto _ : state) {
    op(out, a);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes * 2);
}

void BM_tanh_16M(benchmark::State& state) {
  run_activation(state, [](bp::Tensor& out, const bp::Tensor& a) { bp::tanh_out(out, a); });
}
BENCHMARK(BM_tanh_16M)->UseRealTime();

// On normally distributed values: half of them negative, whose square roots are NaN.
void BM_sqrt_16M(benchmark::State& state) {
  run_activation(state, [](bp::Tensor& out, const bp::Tensor& a) { bp::sqrt_out(out, a); });
}
BENCHMARK(BM_sqrt_16M)->UseRealTime();

// On values in [0.001, 8), across a dozen binades.
void BM_log_16M(benchmark::State& state) {
  const bp::Tensor a = square_input().view({kElements}).add(4.001);
  bp::Tensor out = bp::empty({kElements});
  for (auto _ : state) {
    bp::log_out(out, a);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes * 2);
}
BENCHMARK(BM_log_16M)->UseRealTime();

void BM_gelu_16M(benchmark::State& state) {
  run_activation(state, [](bp::Tensor& out, const bp::Tensor& a) { bp::gelu_out(out, a); });
}
BENCHMARK(BM_gelu_16M)->UseRealTime();

void BM_gelu_tanh_16M(benchmark::State& state) {
  run_activation(state, [](bp::Tensor& out, const bp::Tensor& a) { bp::gelu_out(out, a, "tanh"); });
}
BENCHMARK(BM_gelu_tanh_16M)->UseRealTime();

// Times `op` on square_input(), counting `bytes` per call.
void run_square(benchmark::State& state, int64_t bytes,
                const std::function<void(const bp::Tensor&)>& op) {
  const bp::Tensor x = square_input();
  for (auto _ : state) {
    op(x);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

// The copy that contiguous() makes of a transposed matrix: rows written in order, read down
// columns.
void BM_transpose_copy_4096x4096(benchmark::State& state) {
  bp::Tensor out = bp::empty({kSide, kSide});
  run_square(state, 2 * kBytes, [&](const bp::Tensor& x) { out.copy_(x.transpose(0, 1)); });
}
BENCHMARK(BM_transpose_copy_4096x4096)->UseRealTime();

// index_select of every other column: rows of 2048 elements gathered from rows of 4096.
void BM_index_select_columns_4096x4096(benchmark::State& state) {
  const bp::Tensor columns = bp::arange(0, kSide, 2);
  bp::Tensor out = bp::empty({kSide, kSide / 2});
  run_square(state, kBytes, [&](const bp::Tensor& x) { bp::index_select_out(out, x, 1, columns); });
}
BENCHMARK(BM_index_select_columns_4096x4096)->UseRealTime();

void BM_sum_rows_4096x4096(benchmark::State& state) {
  bp::Tensor out = bp::empty({kSide});
  run_square(state, kBytes + kRowBytes, [&](const bp::Tensor& x) { bp::sum_out(out, x, {1}); });
}
BENCHMARK(BM_sum_rows_4096x4096)->UseRealTime();

void BM_sum_columns_4096x4096(benchmark::State& state) {
  bp::Tensor out = bp::empty({kSide});
  run_square(state, kBytes + kRowBytes, [&](const bp::Tensor& x) { bp::sum_out(out, x, {0}); });
}
BENCHMARK(BM_sum_columns_4096x4096)->UseRealTime();

void BM_amax_columns_4096x4096(benchmark::State& state) {
  bp::Tensor out = bp::empty({kSide});
  run_square(state, kBytes + kRowBytes, [&](const bp::Tensor& x) { bp::amax_out(out, x, {0}); });
}
BENCHMARK(BM_amax_columns_4096x4096)->UseRealTime();

// The first maximum's position in each row (what a classifier's prediction reads).
void BM_argmax_rows_4096x4096(benchmark::State& state) {
  bp::Tensor out = bp::empty({kSide}, bp::kInt64);
  run_square(state, kBytes + kSide * sizeof(int64_t),
             [&](const bp::Tensor& x) { bp::argmax_out(out, x, 1); });
}
BENCHMARK(BM_argmax_rows_4096x4096)->UseRealTime();

void BM_softmax_4096x4096(benchmark::State& state) {
  bp::Tensor out = bp::empty({kSide, kSide});
  run_square(state, 2 * kBytes, [&](const bp::Tensor& x) { bp::softmax_out(out, x, -1); });
}
BENCHMARK(BM_softmax_4096x4096)->UseRealTime();

void BM_softmax_columns_4096x4096(benchmark::State& state) {
  bp::Tensor out = bp::empty({kSide, kSide});
  run_square(state, 2 * kBytes, [&](const bp::Tensor& x) { bp::softmax_out(out, x, 0); });
}
BENCHMARK(BM_softmax_columns_4096x4096)->UseRealTime();

void BM_log_softmax_4096x4096(benchmark::State& state) {
  bp::Tensor out = bp::empty({kSide, kSide});
  run_square(state, 2 * kBytes, [&](const bp::Tensor& x) { bp::log_softmax_out(out, x, -1); });
}
BENCHMARK(BM_log_softmax_4096x4096)->UseRealTime();

// Layer norm over the rows of x, or over those of its transpose (the columns of x) into a new
// tensor: groups lying side by side in the input, one after another in the output.
void run_layer_norm(benchmark::State& state, bool transposed) {
  const bp::Tensor weight = bp::arange(kSide, bp::kFloat32).mul(1.0 / kSide);
  const bp::Tensor bias = bp::ones({kSide});
  bp::Tensor out = bp::empty({kSide, kSide});
  bp::Tensor mean = bp::empty({kSide, 1});
  bp::Tensor rstd = bp::empty({kSide, 1});
  run_square(state, 2 * kBytes + 4 * kRowBytes, [&](const bp::Tensor& x) {
    bp::native_layer_norm_out(out, mean, rstd, transposed ? x.transpose(0, 1) : x, {kSide}, weight,
                              bias, 1e-5);
  });
}

void BM_layer_norm_4096x4096(benchmark::State& state) { run_layer_norm(state, false); }
BENCHMARK(BM_layer_norm_4096x4096)->UseRealTime();

void BM_layer_norm_transposed_4096x4096(benchmark::State& state) { run_layer_norm(state, true); }
BENCHMARK(BM_layer_norm_transposed_4096x4096)->UseRealTime();

void BM_rms_norm_4096x4096(benchmark::State& state) {
  const bp::Tensor weight = bp::arange(kSide, bp::kFloat32).mul(1.0 / kSide);
  bp::Tensor out = bp::empty({kSide, kSide});
  run_square(state, 2 * kBytes + kRowBytes,
             [&](const bp::Tensor& x) { bp::rms_norm_out(out, x, {kSide}, weight, 1e-6); });
}
BENCHMARK(BM_rms_norm_4096x4096)->UseRealTime();

// The same kernels on float32, bfloat16 and float16 operands ("dtypes/<kernel>/<dtype>"), 16M
// elements each (4096 x 4096 for the per-row and per-column kernels): 16-bit operands move half
// the bytes, so a kernel that converts them cheaply takes about half float32's time. Bytes
// processed count the operands' elements at their own size.
struct DTypeCase {
  const char* name;
  double tensors_moved;  // tensors of the dtype read or written, in tensors of 16M elements
  // Writes out (4096 x 4096), or rows (2 x 4096) for the sums and the norm's statistics, from
  // a and b (of the dtype) or from `float32` (a float32 copy of a).
  std::function<void(bp::Tensor& out, bp::Tensor& rows, const bp::Tensor& a, const bp::Tensor& b,
                     const bp::Tensor& float32)>
      op;
  int float32_tensors_read = 0;
};

using bp::Tensor;

const DTypeCase kDTypeCases[] = {
    {"copy from float32", 1,
     [](Tensor& out, Tensor&, const Tensor&, const Tensor&, const Tensor& float32) {
       out.copy_(float32);
     },
     1},
    {"add", 3,
     [](Tensor& out, Tensor&, const Tensor& a, const Tensor& b, const Tensor&) {
       bp::add_out(out, a, b);
     }},
    {"gelu", 2,
     [](Tensor& out, Tensor&, const Tensor& a, const Tensor&, const Tensor&) {
       bp::gelu_out(out, a);
     }},
    {"sum over rows", 1,
     [](Tensor&, Tensor& rows, const Tensor& a, const Tensor&, const Tensor&) {
       Tensor sums = rows.select(0, 0);
       bp::sum_out(sums, a, {1});
     }},
    {"sum over columns", 1,
     [](Tensor&, Tensor& rows, const Tensor& a, const Tensor&, const Tensor&) {
       Tensor sums = rows.select(0, 0);
       bp::sum_out(sums, a, {0});
     }},
    {"softmax over rows", 2,
     [](Tensor& out, Tensor&, const Tensor& a, const Tensor&, const Tensor&) {
       bp::softmax_out(out, a, 1);
     }},
    {"softmax over columns", 2,
     [](Tensor& out, Tensor&, const Tensor& a, const Tensor&, const Tensor&) {
       bp::softmax_out(out, a, 0);
     }},
    {"layer norm", 2,
     [](Tensor& out, Tensor& rows, const Tensor& a, const Tensor&, const Tensor&) {
       Tensor mean = rows.select(0, 0).view({kSide, 1});
       Tensor rstd = rows.select(0, 1).view({kSide, 1});
       bp::native_layer_norm_out(out, mean, rstd, a, {kSide}, std::nullopt, std::nullopt, 1e-5);
     }},
    // ResNet's stem pooling on 16 images of 64 channels, 128 x 128: a quarter as many outputs.
    {"max pool 3x3 stride 2", 1.25,
     [](Tensor& out, Tensor&, const Tensor& a, const Tensor&, const Tensor&) {
       Tensor pooled =
           out.view({kElements}).slice(0, 0, kElements / 4).view({16, 64, kSide / 64, kSide / 64});
       bp::max_pool2d_out(pooled, a.view({16, 64, 128, 128}), {3, 3}, {2, 2}, {1, 1});
     }},
};

void run_dtype_case(benchmark::State& state, const DTypeCase& c, bp::DType dtype) {
  const bp::Tensor float32 = square_input();
  const bp::Tensor a = float32.to(dtype);
  const bp::Tensor b = bp::ones({kSide, kSide}, dtype);
  bp::Tensor out = bp::empty({kSide, kSide}, dtype);
  bp::Tensor rows = bp::empty({2, kSide}, dtype);
  for (auto _ : state) {
    c.op(out, rows, a, b, float32);
    benchmark::ClobberMemory();
  }
  const double bytes_per_element = c.tensors_moved * static_cast<double>(bp::element_size(dtype)) +
                                   c.float32_tensors_read * static_cast<double>(sizeof(float));
  state.SetBytesProcessed(static_cast<int64_t>(static_cast<double>(state.iterations()) *
                                               static_cast<double>(kElements) * bytes_per_element));
}

const bool kDTypeCasesRegistered = [] {
  for (const DTypeCase& c : kDTypeCases) {
    for (const bp::DType dtype : {bp::kFloat32, bp::kBFloat16, bp::kFloat16}) {
      const std::string name =
          std::string("dtypes/") + c.name + "/" + std::string(bp::dtype_name(dtype));
      benchmark::RegisterBenchmark(name.c_str(), [&c, dtype](benchmark::State& state) {
        run_dtype_case(state, c, dtype);
      })->UseRealTime();
    }
  }
  return true;
}();

// The reference: copying 64 MB, split evenly across state.range(0) threads (the calling one
// and helpers started for each copy, which costs some tens of microseconds per copy).
void BM_memcpy_16M(benchmark::State& state) {
  static const std::vector<char> source(kBytes, 1);
  static std::vector<char> target(kBytes);
  const int64_t threads = state.range(0);
  const int64_t share = kBytes / threads;
  const auto copy_share = [&](int64_t i) {
    std::memcpy(target.data() + i * share, source.data() + i * share, static_cast<size_t>(share));
  };
  for (auto _ : state) {
    std::vector<std::thread> helpers;
    for (int64_t i = 1; i < threads; ++i) helpers.emplace_back(copy_share, i);
    copy_share(0);
    for (std::thread& helper : helpers) helper.join();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes * 2);
}
BENCHMARK(BM_memcpy_16M)->UseRealTime()->ArgName("threads")->Arg(1)->Arg(2);

}  // namespace

BENCHMARK_MAIN();
