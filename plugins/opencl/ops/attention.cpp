// _scaled_dot_product_fused_attention (kernels/attention.cl) for the floating dtypes, one launch
// for every leading index at once. On CPU-shaped devices, queries of more than ROW_WORK rows take
// fused_attention_rows, after a copy of the keys in blocks (transpose_keys); otherwise
// fused_attention, one work-item per query row. Head dims past the kernels' MAX_HEAD, and
// leading dims that do not collapse into 8, are refused with BP_STATUS_UNIMPLEMENTED, which
// sends scaled_dot_product_attention to its composite path.
#include "OpenCLNativeFunctions.h"

#include "kernels/scalar_args.h"
#include "runtime/kernel_launch.h"

#include <algorithm>
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
// MAX_HEAD, ROW_WORK and KEY_BLOCK in kernels/attention.cl.
constexpr int64_t kMaxHead = 256;
constexpr int64_t kRowsWork = 8;
constexpr int64_t kKeyBlock = 32;

// The dims before the last two, which number the (L, E) matrices of the operands.
std::span<const int64_t> leading(std::span<const int64_t> values) {
  return values.first(values.size() - 2);
}

// HEAD_MATRIX in kernels/attention.cl: buffer, strides over the leading dims, row and column
// strides.
void add_head_matrix(KernelArgs& args, const TensorView& view, const Dims8& leading_strides) {
  const int64_t dims = view.dim();
  args.add(buffer_of(view))
      .add(leading_strides)
      .add(view.stride(dims - 2))
      .add(view.stride(dims - 1));
}

// The operands of one call, with the leading dims collapsed (walk.strides: query, key, value,
// out).
struct Attention {
  const TensorView& query;
  const TensorView& key;
  const TensorView& value;
  const TensorView& out;
  WalkShape walk;
  int64_t query_length, key_length, embedding, value_embedding;
  ScalarArg scale;  // compute_t
  bool is_causal;
};

// fused_attention: one work-item per query row.
void launch_per_row(Device& device, cl_program program, const Attention& a) {
  KernelArgs args;
  args.add(a.query_length)
      .add(a.key_length)
      .add(static_cast<cl_int>(a.embedding))
      .add(static_cast<cl_int>(a.value_embedding))
      .add(static_cast<cl_int>(a.walk.ndim))
      .add(a.walk.size);
  size_t operand = 0;
  for (const TensorView* view : {&a.query, &a.key, &a.value, &a.out}) {
    add_head_matrix(args, *view, a.walk.strides[operand++]);
  }
  args.add(a.scale).add(static_cast<cl_int>(a.is_causal));
  WorkSize work = elementwise_work(device, a.query_length);
  work.dims = 2;
  work.global[1] = static_cast<size_t>(a.walk.numel);
  launch(device, program, "fused_attention", args, work);
}

// The blocks of keys transpose_keys writes: at least one, so that the buffer is not empty.
int64_t key_blocks_of(const Attention& a) {
  return static_cast<int64_t>(blocks_covering(std::max<int64_t>(a.key_length, 1), kKeyBlock));
}

// The bytes of transpose_keys' copy of the keys, in the compute type (that of the scale).
uint64_t keys_copy_bytes(const Attention& a) {
  return static_cast<uint64_t>(a.walk.numel * key_blocks_of(a) * kKeyBlock * a.embedding) *
         a.scale.size;
}

// transpose_keys, then fused_attention_rows: one work-item per ROW_WORK query rows, in
// work-groups of one, as matmul_rows.
void launch_in_row_blocks(Device& device, cl_program program, const Attention& a) {
  const int64_t key_blocks = key_blocks_of(a);
  const auto bytes = static_cast<size_t>(keys_copy_bytes(a));
  cl_int error = CL_SUCCESS;
  // Releasing it once the kernels are queued is safe: OpenCL keeps it until they are done.
  const OwnedBuffer keys_in_blocks(
      clCreateBuffer(device.context(), CL_MEM_READ_WRITE, bytes, nullptr, &error));
  check_cl(error, "allocating " + std::to_string(bytes) + " bytes for the keys of " +
                      std::string(kOp) + " on " + device.label());

  KernelArgs transpose_args;
  transpose_args.add(a.key_length)
      .add(static_cast<cl_int>(a.embedding))
      .add(static_cast<cl_int>(a.walk.ndim))
      .add(a.walk.size);
  add_head_matrix(transpose_args, a.key, a.walk.strides[1]);
  transpose_args.add(keys_in_blocks.get());
  WorkSize transpose_work;
  transpose_work.dims = 2;
  transpose_work.global = {static_cast<size_t>(key_blocks), static_cast<size_t>(a.walk.numel), 1};
  launch(device, program, "transpose_keys", transpose_args, transpose_work);

  KernelArgs args;
  args.add(a.query_length)
      .add(a.key_length)
      .add(static_cast<cl_int>(a.embedding))
      .add(static_cast<cl_int>(a.value_embedding))
      .add(static_cast<cl_int>(a.walk.ndim))
      .add(a.walk.size);
  add_head_matrix(args, a.query, a.walk.strides[0]);
  args.add(keys_in_blocks.get());
  add_head_matrix(args, a.value, a.walk.strides[2]);
  add_head_matrix(args, a.out, a.walk.strides[3]);
  args.add(a.scale).add(static_cast<cl_int>(a.is_causal));
  WorkSize work;
  work.dims = 2;
  work.global = {blocks_covering(a.query_length, kRowsWork), static_cast<size_t>(a.walk.numel), 1};
  launch(device, program, "fused_attention_rows", args, work);
}

}  // namespace

void _scaled_dot_product_fused_attention_out(const TensorView& query, const TensorView& key,
                                             const TensorView& value, bool is_causal,
                                             std::optional<double> scale, const TensorView& out) {
  Device& device = device_of(out);
  for (const TensorView* view : {&key, &value, &out}) {
    require_dtype(kOp, "every operand", *view, query.dtype());
  }
  plugin::require_dtype_of<plugin::kernel_dtypes::_scaled_dot_product_fused_attention_out>(
      out.dtype());
  device.require_double_precision_for(kOp, query.dtype());
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

  const double scale_or_default = scale.value_or(1.0 / std::sqrt(static_cast<double>(embedding)));
  const ScalarArg scale_arg = compute_scalar(out.dtype(), scale_or_default);
  const Attention attention{
      query,      key,       value,           out,       walk,     query_length,
      key_length, embedding, value_embedding, scale_arg, is_causal};
  const cl_program program = device.program(KernelSource::Attention, out.dtype());
  // The keys' copy pays for itself once more than one block of rows reads it. A copy larger
  // than one buffer may be (16-bit keys near that limit) leaves the kernel per row, which needs
  // no memory of its own; so do keys of no columns, whose copy would be an empty buffer, which
  // OpenCL refuses.
  if (device.kernel_shape() == KernelShape::Cpu && query_length > kRowsWork && embedding > 0 &&
      keys_copy_bytes(attention) <= device.max_allocation()) {
    launch_in_row_blocks(device, program, attention);
  } else {
    launch_per_row(device, program, attention);
  }
}

}  // namespace bp::opencl
