// Launches of softmax and log_softmax and their gradients (kernels in softmax.cuh).
#include "kernels/softmax.cuh"

namespace bp::cuda {

void launch_softmax(DType dtype, const GroupShape<2>& shape, const void* input, void* out,
                    bool logarithm, const LaunchTarget& target) {
  const char* name = logarithm ? "log_softmax" : "softmax";
  if (shape.groups == 0 || shape.group_size == 0) return;
  const auto launch = [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const T* in = static_cast<const T*>(input);
    T* o = static_cast<T*>(out);
    if (prefers_columns(shape)) {
      const unsigned int blocks = grid_blocks(shape.groups, kGroupBlockThreads, target);
      softmax_columns<<<blocks, kGroupBlockThreads, 0, target.stream>>>(shape, in, o, logarithm);
      check_launch(name);
      return;
    }
    const void* const firsts[2] = {input, out};
    if (rows_in_registers<T>(shape, firsts, 1u << 0 | 1u << 1)) {
      launch_register_rows<T>(shape, target, [&](auto team, auto vectors, dim3 grid, dim3 block) {
        softmax_register_rows<T, decltype(team)::value, decltype(vectors)::value>
            <<<grid, block, 0, target.stream>>>(shape, in, o, logarithm);
      });
      check_launch(name);
      return;
    }
    const CachedRowLayout layout = prepare_cached_rows(
        reinterpret_cast<const void*>(&softmax_rows<T>), name, shape.groups, shape.group_size,
        sizeof(compute_t<T>), members_per_thread(kRowBytesPerThread, sizeof(T)), target);
    softmax_rows<<<layout.rows.blocks, dim3(layout.rows.team, layout.rows.slots),
                   layout.shared_bytes, target.stream>>>(shape, in, o, logarithm, layout.cached);
    check_launch(name);
  };
  if (logarithm) {
    plugin::visit_dtype<kernel_dtypes::log_softmax_int_out>(dtype, launch);
  } else {
    plugin::visit_dtype<kernel_dtypes::softmax_int_out>(dtype, launch);
  }
}

void launch_softmax_backward(DType dtype, const GroupShape<3>& shape, const void* grad_output,
                             const void* output, void* grad_input, bool logarithm,
                             const LaunchTarget& target) {
  const char* name = logarithm ? "log_softmax_backward" : "softmax_backward";
  if (shape.groups == 0 || shape.group_size == 0) return;
  const auto launch = [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const RowLayout layout =
        row_layout(shape.groups, shape.group_size,
                   members_per_thread(kRowBytesPerThread, sizeof(T)), kMaxTeamThreads,
                   /*allow_splits=*/false, target);
    softmax_backward_rows<T><<<layout.blocks, dim3(layout.team, layout.slots), 0, target.stream>>>(
        shape, static_cast<const T*>(grad_output), static_cast<const T*>(output),
        static_cast<T*>(grad_input), logarithm);
    check_launch(name);
  };
  if (logarithm) {
    plugin::visit_dtype<kernel_dtypes::_log_softmax_backward_data_out>(dtype, launch);
  } else {
    plugin::visit_dtype<kernel_dtypes::_softmax_backward_data_out>(dtype, launch);
  }
}

}  // namespace bp::cuda
