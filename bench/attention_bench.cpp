// scaled_dot_product_attention on the CPU backend: the fused kernel op that it calls without a
// mask, against its composite path (matmul, softmax, matmul), which an explicit Bool mask that
// keeps the same positions selects. Both compute the same attention in one run; their ratio is
// what fusing gains. And grouped-query attention through enable_gqa against repeating the
// key/value heads by hand. See bench/README.md.
#include <backplane/backplane.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>

namespace {

struct AttentionShape {
  int64_t batch, heads, sequence, head_dim;
};

const AttentionShape kShapes[] = {{1, 8, 512, 64},  {1, 8, 1024, 64},  {1, 8, 2048, 64},
                                  {1, 8, 512, 128}, {1, 8, 1024, 128}, {1, 8, 2048, 128}};

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
  state.counters["GFLOP/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * flops * 1e-9, benchmark::Counter::kIsRate);
}

// One decoding step of grouped-query attention (32 query heads over 8 key/value heads, one query
// position against 4096 cached ones, head dim 128): enable_gqa, which reads each key/value head
// in place for its 4 query heads, against repeating the key/value heads first (a copy per call).
void grouped_query_decode(benchmark::State& state, bool repeat_heads) {
  const int64_t query_heads = 32, kv_heads = 8, cached = 4096, head_dim = 128;
  const bp::Tensor q = bp::randn({1, query_heads, 1, head_dim});
  const bp::Tensor k = bp::randn({1, kv_heads, cached, head_dim});
  const bp::Tensor v = bp::randn({1, kv_heads, cached, head_dim});
  const auto repeated = [&](const bp::Tensor& t) {
    const int64_t groups = query_heads / kv_heads;
    return t.unsqueeze(2)
        .expand({1, kv_heads, groups, cached, head_dim})
        .reshape({1, query_heads, cached, head_dim});
  };
  for (auto _ : state) {
    if (repeat_heads) {
      const bp::Tensor out = bp::scaled_dot_product_attention(q, repeated(k), repeated(v));
      benchmark::DoNotOptimize(out.impl());
    } else {
      benchmark::DoNotOptimize(
          bp::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, false, std::nullopt, true)
              .impl());
    }
  }
}

// One decoding step of plain multi-head attention: 32 heads, one query position against 4096
// cached ones, head dim 128 (16M keys and 16M values, read once).
void multi_head_decode(benchmark::State& state, bp::DType dtype) {
  const bp::Tensor q = bp::randn({1, 32, 1, 128}).to(dtype);
  const bp::Tensor k = bp::randn({1, 32, 4096, 128}).to(dtype);
  const bp::Tensor v = bp::randn({1, 32, 4096, 128}).to(dtype);
  for (auto _ : state) benchmark::DoNotOptimize(bp::scaled_dot_product_attention(q, k, v).impl());
  state.SetBytesProcessed(state.iterations() * (k.numel() + v.numel()) *
                          static_cast<int64_t>(bp::element_size(dtype)));
}

void register_benchmarks() {
  for (const bp::DType dtype : {bp::kFloat32, bp::kBFloat16, bp::kFloat16}) {
    benchmark::RegisterBenchmark(
        ("decode h32 cached 4096 dim 128 " + std::string(bp::dtype_name(dtype))).c_str(),
        multi_head_decode, dtype)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  for (const bool repeat_heads : {false, true}) {
    benchmark::RegisterBenchmark(repeat_heads
                                     ? "gqa decode q32 kv8 cached 4096 dim 128/repeated heads"
                                     : "gqa decode q32 kv8 cached 4096 dim 128/enable_gqa",
                                 grouped_query_decode, repeat_heads)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  for (const AttentionShape& s : kShapes) {
    for (const bool causal : {false, true}) {
      const std::string name = "sdpa b" + std::to_string(s.batch) + " h" + std::to_string(s.heads) +
                               " seq " + std::to_string(s.sequence) + " dim " +
                               std::to_string(s.head_dim) + (causal ? " causal" : "");
      for (const bool fused : {true, false}) {
        benchmark::RegisterBenchmark((name + (fused ? "/fused" : "/composite")).c_str(), attention,
                                     s, causal, fused)
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
