// scaled_dot_product_attention on the CPU backend: the fused kernel op that it calls without a
// mask, against its composite path (matmul, softmax, matmul), which an explicit Bool mask that
// keeps the same positions selects. Both compute the same attention in one run; their ratio is
// what fusing gains. See bench/README.md.
#include <backplane/backplane.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>

namespace {

struct AttentionShape {
  int64_t batch, heads, sequence, head_dim;
};

const AttentionShape kShapes[] = {{1, 8, 512, 64},   {1, 8, 1024, 64},  {1, 8, 2048, 64},
                                  {1, 8, 512, 128},  {1, 8, 1024, 128}, {1, 8, 2048, 128}};

// The positions a causal query attends to (key <= query), or every position.
bp::Tensor keep_mask(int64_t sequence, bool causal) {
  if (!causal) return bp::full({sequence, sequence}, true, bp::kBool);
  const bp::Tensor positions = bp::arange(sequence);
  return bp::lt(positions.view({1, sequence}), bp::add(positions.view({sequence, 1}), 1));
}

void attention(benchmark::State& state, AttentionShape s, bool causal, bool fused) {
  const bp::Tensor q = bp::randn({s.batch, s.heads, s.sequence, s.head_dim});
  const bp::Tensor k = bp::randn({s.batch, s.heads, s.sequence, s.head_dim});
  const bp::Tensor v = bp::randn({s.batch, s.heads, s.sequence, s.head_dim});
  // Without a mask the call takes the fused kernel; with one, the composite.
  const std::optional<bp::Tensor> mask =
      fused ? std::nullopt : std::optional<bp::Tensor>(keep_mask(s.sequence, causal));
  const bool causal_flag = fused && causal;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        bp::scaled_dot_product_attention(q, k, v, mask, 0.0, causal_flag).impl());
  }
  // Two products of 2 * L * S * E multiply-adds each; a causal mask halves the useful part.
  const double flops = 4.0 * static_cast<double>(s.batch * s.heads) * s.sequence * s.sequence *
                       s.head_dim * (causal ? 0.5 : 1.0);
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * flops * 1e-9,
                         benchmark::Counter::kIsRate);
}

void register_benchmarks() {
  for (const AttentionShape& s : kShapes) {
    for (const bool causal : {false, true}) {
      const std::string name = "sdpa b" + std::to_string(s.batch) + " h" +
                               std::to_string(s.heads) + " seq " + std::to_string(s.sequence) +
                               " dim " + std::to_string(s.head_dim) +
                               (causal ? " causal" : "");
      for (const bool fused : {true, false}) {
        benchmark::RegisterBenchmark((name + (fused ? "/fused" : "/composite")).c_str(),
                                     attention, s, causal, fused)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
