// Launches of the reductions (kernels in reduce.cuh).
#include "kernels/reduce.cuh"

namespace bp::cuda {
namespace {

template <typename T, typename Policy>
void launch_reduction(const GroupShape<Policy::kOperands>& shape, const void* input,
                      const Policy& policy, const LaunchTarget& target, GroupScratch& scratch,
                      std::string_view name) {
  using Acc = typename Policy::Acc;
  if (shape.groups == 0) return;
  const T* in = static_cast<const T*>(input);
  const ReductionLayout layout =
      reduction_layout(shape, kReductionMembersPerThread, sizeof(T), target);
  Acc* partials = nullptr;
  uint32_t* counters = nullptr;
  const unsigned int splits = layout.grid.y;
  if (splits > 1) {
    partials = static_cast<Acc*>(
        scratch.allocate(static_cast<size_t>(shape.groups) * splits * sizeof(Acc)));
    counters = scratch.zeroed_counters(shape.groups);
  }
  if (layout.columns) {
    reduce_columns<T>
        <<<layout.grid, layout.block, 0, target.stream>>>(shape, in, policy, partials, counters);
  } else {
    reduce_rows<T>
        <<<layout.grid, layout.block, 0, target.stream>>>(shape, in, policy, partials, counters);
  }
  check_launch(name);
}

}  // namespace

void launch_sum(DType dtype, const GroupShape<2>& shape, const void* input, void* out, bool average,
                const LaunchTarget& target, GroupScratch& scratch) {
  const char* name = average ? "mean" : "sum";
  const auto launch = [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const SumPolicy<T> policy{static_cast<T*>(out), average, shape.group_size};
    launch_reduction<T>(shape, input, policy, target, scratch, name);
  };
  if (average) {
    plugin::visit_dtype<kernel_dtypes::mean_out>(dtype, launch);
  } else {
    plugin::visit_dtype<kernel_dtypes::sum_IntList_out>(dtype, launch);
  }
}

template <typename Kernel>
void launch_max(DType dtype, const GroupShape<3>& shape, const void* input, void* values,
                int64_t* indices, const LaunchTarget& target, GroupScratch& scratch) {
  plugin::visit_dtype<Kernel>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const MaxPolicy<T> policy{static_cast<T*>(values), indices};
    launch_reduction<T>(shape, input, policy, target, scratch, "max");
  });
}

template void launch_max<kernel_dtypes::amax_out>(DType, const GroupShape<3>&, const void*, void*,
                                                  int64_t*, const LaunchTarget&, GroupScratch&);
template void launch_max<kernel_dtypes::max_dim_max>(DType, const GroupShape<3>&, const void*,
                                                     void*, int64_t*, const LaunchTarget&,
                                                     GroupScratch&);
template void launch_max<kernel_dtypes::argmax_out>(DType, const GroupShape<3>&, const void*, void*,
                                                    int64_t*, const LaunchTarget&, GroupScratch&);

}  // namespace bp::cuda
