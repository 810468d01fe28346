// Large elementwise kernels of the CPU backend against memcpy of the same output bytes, in one
// run, so that "how close to memory bandwidth" reads as a ratio. Run it with
// BACKPLANE_NUM_THREADS=1 and =2 to compare thread counts; see bench/README.md.
//
// Bytes processed count what each one reads and writes: add and mul read two 64 MB inputs and
// write one, relu and memcpy read one and write one.
#include <backplane/backplane.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <functional>

namespace {

constexpr int64_t kElements = int64_t{16} << 20;
constexpr int64_t kBytes = kElements * sizeof(float);

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

// The floor: one thread copying the output's bytes.
void BM_memcpy_16M(benchmark::State& state) {
  const bp::Tensor src = bp::ones({kElements});
  bp::Tensor dst = bp::empty({kElements});
  for (auto _ : state) {
    std::memcpy(dst.data_ptr(), src.data_ptr(), kBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBytes * 2);
}
BENCHMARK(BM_memcpy_16M)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
