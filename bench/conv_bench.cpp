// The CPU backend's float32 conv2d on ResNet-50's layer shapes, batch 1 and 8, against oneDNN
// running the same convolution primitive directly, in one run. Run it once with
// BACKPLANE_NUM_THREADS=1 and once with =2 to compare thread counts; see bench/README.md.
#include "onednn_reference.h"
#include "resnet50_layers.h"

#include <backplane/backplane.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using bench::ConvLayer;

void report_flops(benchmark::State& state, const ConvLayer& l, int64_t batch) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * l.flops(batch) * 1e-9, benchmark::Counter::kIsRate);
}

void backplane_conv(benchmark::State& state, ConvLayer l, int64_t batch) {
  const bp::Tensor input = bp::randn({batch, l.in_channels, l.size, l.size});
  const bp::Tensor weight = bp::randn({l.out_channels, l.in_channels, l.kernel, l.kernel});
  const bp::Tensor bias = bp::randn({l.out_channels});
  bp::Tensor out = bp::empty({batch, l.out_channels, l.out_size(), l.out_size()});
  for (auto _ : state) {
    bp::conv2d_out(out, input, weight, bias, {l.stride}, {l.padding});
    benchmark::ClobberMemory();
  }
  report_flops(state, l, batch);
}

void onednn_conv(benchmark::State& state, ConvLayer l, int64_t batch) {
  using dnnl::memory;
  using tag = memory::format_tag;
  const memory::desc src({batch, l.in_channels, l.size, l.size}, memory::data_type::f32, tag::nchw);
  const memory::desc weights({l.out_channels, l.in_channels, l.kernel, l.kernel},
                             memory::data_type::f32, tag::oihw);
  const memory::desc bias({l.out_channels}, memory::data_type::f32, tag::x);
  const memory::desc dst({batch, l.out_channels, l.out_size(), l.out_size()},
                         memory::data_type::f32, tag::nchw);
  std::vector<float> src_data(src.get_size() / sizeof(float), 0.5f),
      weight_data(weights.get_size() / sizeof(float), 0.25f),
      bias_data(bias.get_size() / sizeof(float), 1.0f), dst_data(dst.get_size() / sizeof(float));
  bench::RawPrimitive raw;
  const dnnl::convolution_forward::primitive_desc descriptor(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights,
          bias, dst, {l.stride, l.stride}, {0, 0}, {l.padding, l.padding}, {l.padding, l.padding}),
      bench::RawPrimitive::attributes(), raw.engine());
  raw.set(dnnl::convolution_forward(descriptor), descriptor.scratchpad_desc());
  const memory src_memory = raw.wrap(src, src_data.data()),
               weight_memory = raw.wrap(weights, weight_data.data()),
               bias_memory = raw.wrap(bias, bias_data.data()),
               dst_memory = raw.wrap(dst, dst_data.data());
  for (auto _ : state) {
    raw.run({{DNNL_ARG_SRC, src_memory},
             {DNNL_ARG_WEIGHTS, weight_memory},
             {DNNL_ARG_BIAS, bias_memory},
             {DNNL_ARG_DST, dst_memory}});
    benchmark::ClobberMemory();
  }
  report_flops(state, l, batch);
}

}  // namespace

int main(int argc, char** argv) {
  for (const int64_t batch : {1, 8}) {
    for (const ConvLayer& l : bench::kResNet50Layers) {
      const std::string name = std::string("conv2d ") + l.name + " batch " + std::to_string(batch);
      benchmark::RegisterBenchmark((name + "/backplane").c_str(), backplane_conv, l, batch)
          ->UseRealTime();
      benchmark::RegisterBenchmark((name + "/onednn").c_str(), onednn_conv, l, batch)
          ->UseRealTime();
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
