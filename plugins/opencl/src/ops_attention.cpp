// Fused attention (kernels/attention.cl) for the floating dtypes: one work-item per query row,
// one launch for every leading index at once. Head dims past the kernel's MAX_HEAD, and leading
// dims that do not collapse into 8, are refused with BP_STATUS_UNIMPLEMENTED, which sends
// scaled_dot_product_attention to its composite path.
#include "OpenCLNativeFunctions.h"

#include "dtype_support.h"
#include "kernel_launch.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::opencl {
namespace {

constexpr std::string_view kOp = "_scaled_dot_product_fused_attention";
// MAX_HEAD in kernels/attention.cl.
constexpr int64_t kMaxHead = 256;

// The dims before the last two, which number the (L, E) matrices of the operands.
std::span<const int64_t> leading(std::span<const int64_t> values) {
  return values.first(values.size() - 2);
}

// HEAD_MATRIX in kernels/attention.cl: buffer, strides over the leading dims, row and column
// strides.
void add_head_matrix(KernelArgs& args, const TensorView& view, const Dims8& leading_strides) {
  const int64_t dims = view.dim();
  args.add(buffer_of(view)).add(leading_strides).add(view.stride(dims - 2)).add(view.stride(dims - 1));
}

}  // namespace

void _scaled_dot_product_fused_attention_out(const TensorView& query, const TensorView& key,
                                             const TensorView& value, bool is_causal,
                                             std::optional<double> scale, const TensorView& out) {
  Device& device = device_of(out);
  for (const TensorView* view : {&key, &value, &out}) require_dtype(kOp, "every operand", *view, query.dtype());
  require_supported(device, kOp, query.dtype(), DTypes::Floating);
  const int64_t dims = query.dim();
  const int64_t query_length = query.size(dims - 2), key_length = key.size(dims - 2);
  const int64_t embedding = query.size(dims - 1), value_embedding = value.size(dims - 1);
  if (embedding > kMaxHead || value_embedding > kMaxHead) {
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                        std::string(kOp) + ": the OpenCL kernel takes head dims up to " +
                            std::to_string(kMaxHead) + "; these are " + std::to_string(embedding) +
                            " (query and key) and " + std::to_string(value_embedding) + " (value)");
  }
  const WalkShape walk = collapse(leading(out.sizes()),
                                  {leading(query.strides()), leading(key.strides()),
                                   leading(value.strides()), leading(out.strides())},
                                  kOp, /*outer_allowed=*/false);
  if (walk.numel == 0 || query_length == 0) return;

  KernelArgs args;
  args.add(query_length).add(key_length).add(static_cast<cl_int>(embedding))
      .add(static_cast<cl_int>(value_embedding)).add(static_cast<cl_int>(walk.ndim)).add(walk.size);
  size_t operand = 0;
  for (const TensorView* view : {&query, &key, &value, &out}) add_head_matrix(args, *view, walk.strides[operand++]);
  args.add(compute_scalar(out.dtype(), scale.value_or(1.0 / std::sqrt(static_cast<double>(embedding)))))
      .add(static_cast<cl_int>(is_causal));

  WorkSize work = elementwise_work(device, query_length);
  work.dims = 2;
  work.global[1] = static_cast<size_t>(walk.numel);
  launch(device, device.program(KernelSource::Attention, out.dtype()), "fused_attention", args, work);
}

}  // namespace bp::opencl
