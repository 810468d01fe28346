// The cost of the way from bp::add to the kernel, side by side with the kernel alone.
//
//   BM_add_end_to_end: bp::add on 1-element float32 tensors: meta step, output allocation
//     through the caching allocator, table lookup, DLPack views, the kernel.
//   BM_kernel_direct_with_allocation: the same CPU kernel called through its function pointer
//     with prebuilt views, plus allocating an output tensor: the floor that dispatch adds to.
//
// Their ratio is what the dispatch path costs; see bench/README.md.
#include <backplane/backplane.h>

#include "dispatch/dispatch.h"
#include "dispatch/dlpack_bridge.h"

#include <benchmark/benchmark.h>

namespace {

void BM_add_end_to_end(benchmark::State& state) {
  const bp::Tensor a = bp::ones({1});
  const bp::Tensor b = bp::ones({1});
  for (auto _ : state) {
    bp::Tensor c = bp::add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
}
BENCHMARK(BM_add_end_to_end);

void BM_kernel_direct_with_allocation(benchmark::State& state) {
  using bp::detail::OpId;
  const bp::Tensor a = bp::ones({1});
  const bp::Tensor b = bp::ones({1});
  const auto kernel = reinterpret_cast<bp::detail::add_out_kernel>(
      reinterpret_cast<void (*)()>(bp::detail::kernel_for(OpId::add_out, bp::Device::cpu())));
  const DLTensor a_view = bp::detail::to_dlpack_view(a);
  const DLTensor b_view = bp::detail::to_dlpack_view(b);
  const bp_scalar alpha = bp::Scalar(1).to_abi();
  for (auto _ : state) {
    bp::Tensor c = bp::empty({1});
    DLTensor c_view = bp::detail::to_dlpack_view(c);
    benchmark::DoNotOptimize(kernel(&a_view, &b_view, alpha, &c_view));
  }
}
BENCHMARK(BM_kernel_direct_with_allocation);

}  // namespace

BENCHMARK_MAIN();
