// Launches of training batch norm and its gradient (batch_norm.cuh).
#include "kernels/batch_norm.cuh"

namespace bp::cuda {

void launch_batch_norm_training(DType dtype, const GroupShape<2>& shape, const void* input,
                                void* out, const ChannelVector& weight, const ChannelVector& bias,
                                const ChannelVector& save_mean, const ChannelVector& save_invstd,
                                double eps, const LaunchTarget& target) {
  if (shape.groups == 0) return;
  plugin::visit_dtype<kernel_dtypes::native_batch_norm_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const RowLayout layout = row_layout(shape.groups, shape.group_size,
                                        members_per_thread(kRowBytesPerThread, sizeof(T)),
                                        kMaxTeamThreads, /*allow_splits=*/false, target);
    batch_norm_training<T><<<layout.blocks, dim3(layout.team, layout.slots), 0, target.stream>>>(
        shape, static_cast<const T*>(input), static_cast<T*>(out), weight, bias, save_mean,
        save_invstd, static_cast<compute_t<T>>(eps));
    check_launch("batch_norm_training");
  });
}

void launch_batch_norm_backward(DType dtype, const GroupShape<3>& shape, const void* grad_out,
                                const void* input, void* grad_input, const ChannelVector& weight,
                                const ChannelVector& mean, const ChannelVector& invstd,
                                bool invstd_from_variance, bool training, double eps,
                                const ChannelVector& grad_weight, const ChannelVector& grad_bias,
                                const LaunchTarget& target) {
  if (shape.groups == 0) return;
  plugin::visit_dtype<kernel_dtypes::native_batch_norm_backward_out>(dtype, [&](auto tag) {
    using T = device_t<typename decltype(tag)::type>;
    const RowLayout layout = row_layout(shape.groups, shape.group_size,
                                        members_per_thread(kRowBytesPerThread, sizeof(T)),
                                        kMaxTeamThreads, /*allow_splits=*/false, target);
    batch_norm_gradient<T><<<layout.blocks, dim3(layout.team, layout.slots), 0, target.stream>>>(
        shape, static_cast<const T*>(grad_out), static_cast<const T*>(input),
        static_cast<T*>(grad_input), weight, mean, invstd, invstd_from_variance, training,
        static_cast<compute_t<T>>(eps), grad_weight, grad_bias);
    check_launch("batch_norm_gradient");
  });
}

}  // namespace bp::cuda
