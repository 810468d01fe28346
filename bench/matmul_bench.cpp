// The CPU backend's float32 mm against oneDNN running the same matmul primitive directly, in
// one run: the ratio of their times is what Backplane's dispatch, checks and primitive cache
// cost on top of oneDNN. And a linear layer with its activation fused (_addmm_activation)
// against addmm followed by the activation, and a linear layer in each floating dtype. See
// bench/README.md.
#include "onednn_reference.h"

#include <backplane/backplane.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

struct MatmulShape {
  int64_t m, n, k;  // (m x k) @ (k x n)
};

const MatmulShape kShapes[] = {{1024, 1024, 1024}, {4096, 4096, 1024}};

void report_flops(benchmark::State& state, const MatmulShape& s) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 2.0 * static_cast<double>(s.m * s.n * s.k) * 1e-9,
      benchmark::Counter::kIsRate);
}

void backplane_mm(benchmark::State& state, MatmulShape s) {
  const bp::Tensor a = bp::randn({s.m, s.k});
  const bp::Tensor b = bp::randn({s.k, s.n});
  bp::Tensor out = bp::empty({s.m, s.n});
  for (auto _ : state) {
    bp::mm_out(out, a, b);
    benchmark::ClobberMemory();
  }
  report_flops(state, s);
}

void onednn_mm(benchmark::State& state, MatmulShape s) {
  using dnnl::memory;
  std::vector<float> a(static_cast<size_t>(s.m * s.k), 0.5f),
      b(static_cast<size_t>(s.k * s.n), 0.25f), out(static_cast<size_t>(s.m * s.n));
  bench::RawPrimitive raw;
  const memory::desc a_desc({s.m, s.k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc b_desc({s.k, s.n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc out_desc({s.m, s.n}, memory::data_type::f32, memory::format_tag::ab);
  const dnnl::matmul::primitive_desc descriptor(dnnl::matmul::desc(a_desc, b_desc, out_desc),
                                                bench::RawPrimitive::attributes(), raw.engine());
  raw.set(dnnl::matmul(descriptor), descriptor.scratchpad_desc());
  const memory a_memory = raw.wrap(a_desc, a.data()), b_memory = raw.wrap(b_desc, b.data()),
               out_memory = raw.wrap(out_desc, out.data());
  for (auto _ : state) {
    raw.run({{DNNL_ARG_SRC, a_memory}, {DNNL_ARG_WEIGHTS, b_memory}, {DNNL_ARG_DST, out_memory}});
    benchmark::ClobberMemory();
  }
  report_flops(state, s);
}

// A linear layer's bias and activation: fused into the product (_addmm_activation), or addmm
// and then relu or gelu, each writing its whole output.
void linear_activation(benchmark::State& state, MatmulShape s, bool use_gelu, bool fused) {
  const bp::Tensor bias = bp::randn({s.n});
  const bp::Tensor input = bp::randn({s.m, s.k});
  const bp::Tensor weight_t = bp::randn({s.k, s.n});
  bp::Tensor out = bp::empty({s.m, s.n});
  for (auto _ : state) {
    if (fused) {
      bp::_addmm_activation_out(out, bias, input, weight_t, 1, 1, use_gelu);
    } else {
      bp::addmm_out(out, bias, input, weight_t);
      use_gelu ? bp::gelu_out(out, out, "tanh") : bp::relu_out(out, out);
    }
    benchmark::ClobberMemory();
  }
  report_flops(state, s);
}

// bp::linear (input @ weight^T, the weight stored as nn.Linear keeps it) in `dtype`: float16
// and bfloat16 run on oneDNN's 16-bit kernels where the CPU has them, else in float32 blocks.
void linear_in(benchmark::State& state, MatmulShape s, bp::DType dtype) {
  const bp::Tensor input = bp::randn({s.m, s.k}).to(dtype);
  const bp::Tensor weight = bp::randn({s.n, s.k}).to(dtype);
  for (auto _ : state) {
    const bp::Tensor out = bp::linear(input, weight);
    benchmark::DoNotOptimize(out);
  }
  report_flops(state, s);
}

}  // namespace

int main(int argc, char** argv) {
  for (const MatmulShape& s : kShapes) {
    const std::string name = "mm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                             std::to_string(s.k) + " (MxNxK) Float";
    benchmark::RegisterBenchmark((name + "/backplane").c_str(), backplane_mm, s)->UseRealTime();
    benchmark::RegisterBenchmark((name + "/onednn").c_str(), onednn_mm, s)->UseRealTime();
  }
  // A transformer's feed-forward layer on 512 tokens: width 1024, hidden 4096.
  const MatmulShape layer{512, 4096, 1024};
  for (const bool use_gelu : {false, true}) {
    const std::string name =
        std::string("linear 512x1024 -> 4096 + ") + (use_gelu ? "gelu" : "relu");
    benchmark::RegisterBenchmark((name + "/fused").c_str(), linear_activation, layer, use_gelu,
                                 true)
        ->UseRealTime();
    benchmark::RegisterBenchmark((name + "/addmm then activation").c_str(), linear_activation,
                                 layer, use_gelu, false)
        ->UseRealTime();
  }
  // 64 tokens through a 4096 -> 1024 projection, in each floating dtype.
  const MatmulShape projection{64, 1024, 4096};
  for (const bp::DType dtype : {bp::kFloat32, bp::kBFloat16, bp::kFloat16}) {
    const std::string name = "linear 64x4096 -> 1024 " + std::string(bp::dtype_name(dtype));
    benchmark::RegisterBenchmark(name.c_str(), linear_in, projection, dtype)->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
