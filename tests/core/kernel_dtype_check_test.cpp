// The core's check before every kernel: an op refuses a dtype that ops.yaml does not declare for
// it (`dtypes:`) with one message, the text plugins give too (bp::plugin::dtype_refusal), and
// passes every declared dtype on to the kernel lookup. The ops run on the fixture device that
// has no kernels, so a dtype that passes the check ends in "has no kernel".
#include "core_test_support.h"

#include <core_generated/Kernels.h>
#include <core_generated/OpTable.h>

#include <backplane/sdk/kernel_dtypes.h>

#include <string>
#include <type_traits>
#include <vector>

using namespace bp;
using coretest::check_error;
using coretest::check_invalid_argument;

namespace {

// What each argument of a kernel wrapper gets: `tensor` for every tensor, an empty or zero
// value for the rest, which nothing reads before the kernel lookup fails.
template <typename Parameter>
std::remove_cvref_t<Parameter> stand_in(const Tensor& tensor) {
  using Value = std::remove_cvref_t<Parameter>;
  if constexpr (std::is_same_v<Value, Tensor>) {
    return tensor;
  } else if constexpr (std::is_same_v<Value, std::vector<Tensor>>) {
    return {tensor};
  } else {
    return Value{};
  }
}

// Runs `wrapper` (a kernel op's function in Kernels.h, `Kernel` its declaration) with tensors of
// every dtype: the declared ones reach the kernel lookup, the others are refused.
template <typename Kernel, typename... Parameters>
void check_declared_dtypes(void (*wrapper)(Parameters...), size_t op_id) {
  CAPTURE(Kernel::op);
  REQUIRE(op_id < detail::kOpCount);
  CHECK(Kernel::op == detail::kOpNames[op_id]);
  for (const DType dtype : kAllDTypes) {
    CAPTURE(dtype_name(dtype));
    const Tensor tensor = empty({1}, dtype, coretest::fixture_device_memory_device());
    const auto call = [&] { wrapper(stand_in<Parameters>(tensor)...); };
    if (Kernel::dtypes.contains(dtype)) {
      check_error(call, ErrorCode::NotImplemented, {"has no kernel for device"});
    } else {
      const std::string refusal =
          plugin::dtype_refusal(Kernel::op, Kernel::argument, Kernel::dtypes, dtype);
      check_invalid_argument(call, {refusal});
    }
  }
}

}  // namespace

TEST_CASE("every kernel op refuses the dtypes ops.yaml does not declare, before its kernel") {
  size_t op_id = 0;
#define CHECK_KERNEL_OP(name) \
  check_declared_dtypes<plugin::kernel_dtypes::name>(&detail::kernels::name, op_id++)
  CHECK_KERNEL_OP(add_out);
  CHECK_KERNEL_OP(sub_out);
  CHECK_KERNEL_OP(mul_out);
  CHECK_KERNEL_OP(div_out);
  CHECK_KERNEL_OP(maximum_out);
  CHECK_KERNEL_OP(minimum_out);
  CHECK_KERNEL_OP(eq_Tensor_out);
  CHECK_KERNEL_OP(lt_Tensor_out);
  CHECK_KERNEL_OP(gt_Tensor_out);
  CHECK_KERNEL_OP(where_self_out);
  CHECK_KERNEL_OP(neg_out);
  CHECK_KERNEL_OP(abs_out);
  CHECK_KERNEL_OP(exp_out);
  CHECK_KERNEL_OP(log_out);
  CHECK_KERNEL_OP(sqrt_out);
  CHECK_KERNEL_OP(tanh_out);
  CHECK_KERNEL_OP(sigmoid_out);
  CHECK_KERNEL_OP(relu_out);
  CHECK_KERNEL_OP(threshold_backward_grad_input);
  CHECK_KERNEL_OP(gelu_out);
  CHECK_KERNEL_OP(gelu_backward_grad_input);
  CHECK_KERNEL_OP(silu_out);
  CHECK_KERNEL_OP(sum_IntList_out);
  CHECK_KERNEL_OP(mean_out);
  CHECK_KERNEL_OP(amax_out);
  CHECK_KERNEL_OP(max_dim_max);
  CHECK_KERNEL_OP(argmax_out);
  CHECK_KERNEL_OP(softmax_int_out);
  CHECK_KERNEL_OP(_softmax_backward_data_out);
  CHECK_KERNEL_OP(log_softmax_int_out);
  CHECK_KERNEL_OP(_log_softmax_backward_data_out);
  CHECK_KERNEL_OP(native_layer_norm_out);
  CHECK_KERNEL_OP(native_layer_norm_backward_out);
  CHECK_KERNEL_OP(rms_norm_out);
  CHECK_KERNEL_OP(batch_norm_inference_out);
  CHECK_KERNEL_OP(native_batch_norm_out);
  CHECK_KERNEL_OP(native_batch_norm_backward_out);
  CHECK_KERNEL_OP(conv2d_out);
  CHECK_KERNEL_OP(convolution_backward_out);
  CHECK_KERNEL_OP(max_pool2d_out);
  CHECK_KERNEL_OP(max_pool2d_with_indices_out);
  CHECK_KERNEL_OP(max_pool2d_with_indices_backward_grad_input);
  CHECK_KERNEL_OP(avg_pool2d_out);
  CHECK_KERNEL_OP(avg_pool2d_backward_grad_input);
  CHECK_KERNEL_OP(adaptive_avg_pool2d_out);
  CHECK_KERNEL_OP(_adaptive_avg_pool2d_backward_out);
  CHECK_KERNEL_OP(mm_out);
  CHECK_KERNEL_OP(bmm_out);
  CHECK_KERNEL_OP(addmm_out);
  CHECK_KERNEL_OP(_addmm_activation_out);
  CHECK_KERNEL_OP(_scaled_dot_product_fused_attention_out);
  CHECK_KERNEL_OP(embedding_out);
  CHECK_KERNEL_OP(embedding_dense_backward_out);
  CHECK_KERNEL_OP(index_select_out);
  CHECK_KERNEL_OP(index_add_out);
  CHECK_KERNEL_OP(cat_out);
  CHECK_KERNEL_OP(copy_);
  CHECK_KERNEL_OP(fill__Scalar);
  CHECK_KERNEL_OP(arange_start_out);
  CHECK_KERNEL_OP(nll_loss_forward_output);
  CHECK_KERNEL_OP(nll_loss_backward_grad_input);
  CHECK_KERNEL_OP(_sgd_step_out);
  CHECK_KERNEL_OP(_adamw_step_out);
#undef CHECK_KERNEL_OP
  // Each kernel op once, in OpId order.
  CHECK(op_id == detail::kOpCount);
}

TEST_CASE("the refusal names the op, the argument, the dtype, what it takes and what to do") {
  const Tensor mask = ones({2}, kBool);
  check_invalid_argument([&] { relu(mask); },
                         {"relu.out takes Float32, Float64, Float16, BFloat16, Int8, UInt8, "
                          "Int32 or Int64, but self is Bool; convert with .to(bp::kFloat32)"});
  check_invalid_argument(
      [] {
        max_pool2d(ones({1, 1, 2, 2}, kInt64), {2});
      },
      {"max_pool2d.out takes Float32, Float64, Float16 or BFloat16, but self "
       "is Int64; convert with .to(bp::kFloat32)"});
}
