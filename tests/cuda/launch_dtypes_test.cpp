// Which dtypes the launches take, checked on the host: each op's kernels exist for the dtypes
// ops.yaml declares for it (bp::plugin::kernel_dtypes), less those the plugin computes another
// way (cuBLASLt) or does not fuse, and any other dtype is refused before anything reaches a GPU,
// with the message every backend gives (bp::plugin::dtype_refusal).
#include "cuda_test_support.h"

#include "kernels/launch.h"

#include <backplane/sdk/dtype_set.hpp>
#include <backplane/sdk/status.hpp>

#include <optional>
#include <string>

namespace {

namespace kernel_dtypes = bp::plugin::kernel_dtypes;
using bp::DType;
using bp::plugin::DTypeSet;

// `launch` must refuse `dtype` as refuse_dtype<Kernel> refuses it when the plugin takes
// `accepted`.
template <typename Kernel, typename Launch>
void check_refused(DType dtype, DTypeSet accepted, Launch launch) {
  CAPTURE(Kernel::op);
  CAPTURE(bp::dtype_name(dtype));
  try {
    launch();
    FAIL("no error");
  } catch (const bp::plugin::Error& e) {
    CHECK(e.code() == BP_STATUS_UNIMPLEMENTED);
    CHECK(std::string(e.what()) ==
          bp::plugin::dtype_refusal(Kernel::op, Kernel::argument, accepted, dtype));
  }
}

// A group of one member, so that the group launches do not return before choosing a kernel.
template <int N>
bp::cuda::GroupShape<N> one_group() {
  bp::cuda::GroupShape<N> shape;
  shape.groups = 1;
  shape.group_size = 1;
  return shape;
}

TEST_CASE(
    "a dtype that an op does not declare is refused before any launch, as every backend "
    "refuses it") {
  const bp::cuda::ElementwiseLaunch<2> two{};
  const bp::cuda::ElementwiseLaunch<3> three{};
  const bp::cuda::LaunchTarget target{};

  check_refused<kernel_dtypes::sub_out>(DType::Bool, kernel_dtypes::sub_out::dtypes, [&] {
    bp::cuda::launch_binary(bp::cuda::BinaryOp::Sub, DType::Bool, three, bp::Scalar(-1));
  });
  check_refused<kernel_dtypes::div_out>(DType::Int32, kernel_dtypes::div_out::dtypes, [&] {
    bp::cuda::launch_binary(bp::cuda::BinaryOp::Div, DType::Int32, three, bp::Scalar(1));
  });
  check_refused<kernel_dtypes::neg_out>(DType::Bool, kernel_dtypes::neg_out::dtypes, [&] {
    bp::cuda::launch_unary(bp::cuda::UnaryOp::Neg, DType::Bool, two);
  });
  check_refused<kernel_dtypes::gelu_out>(DType::Int64, kernel_dtypes::gelu_out::dtypes, [&] {
    bp::cuda::launch_unary(bp::cuda::UnaryOp::GeluTanh, DType::Int64, two);
  });
  check_refused<kernel_dtypes::arange_start_out>(
      DType::Bool, kernel_dtypes::arange_start_out::dtypes, [&] {
        bp::cuda::launch_arange(DType::Bool, nullptr, 1, 1, bp::Scalar(0), bp::Scalar(1), target);
      });
  check_refused<kernel_dtypes::log_softmax_int_out>(
      DType::Int8, kernel_dtypes::log_softmax_int_out::dtypes, [&] {
        bp::cuda::launch_softmax(DType::Int8, one_group<2>(), nullptr, nullptr,
                                 /*logarithm=*/true, target);
      });
  using RmsNorm = kernel_dtypes::rms_norm_out;
  check_refused<RmsNorm>(DType::UInt8, RmsNorm::dtypes, [&] {
    bp::cuda::launch_rms_norm(DType::UInt8, one_group<3>(), nullptr, nullptr, nullptr, std::nullopt,
                              target);
  });
}

// Fused attention runs on the tensor cores' 16-bit inputs only; the refusal sends the other
// dtypes to scaled_dot_product_attention's composite path.
TEST_CASE(
    "fused attention refuses the floating dtypes it does not fuse, naming the ones it "
    "fuses") {
  const bp::cuda::LaunchTarget target{};
  using Attention = kernel_dtypes::_scaled_dot_product_fused_attention_out;
  bp::cuda::AttentionShape shape;
  shape.batches = 1;
  shape.query_length = 1;
  shape.key_length = 1;
  shape.head_dim = 64;
  const void* data[bp::cuda::kAttentionOperands] = {};
  const DTypeSet half_types = bp::plugin::dtype_set({DType::Float16, DType::BFloat16});
  check_refused<Attention>(DType::Float32, half_types, [&] {
    bp::cuda::launch_fused_attention(DType::Float32, shape, data, 1.0, target);
  });
}

}  // namespace
