// batch_norm_inference: out = (input - running_mean) / sqrt(running_var + eps) * weight + bias,
// per channel (dim 1). float32 runs through oneDNN's batch normalization with global
// statistics, on a plain (N, C, spatial) array; so do float16 and bfloat16 where this CPU's
// oneDNN has them. float64 and the 16-bit dtypes elsewhere run on one strided elementwise loop
// over per-channel factors computed in the dtype's compute type.
#include "CPUNativeFunctions.h"

#include "dense.h"
#include "dtypes.h"
#include "onednn/memory.h"
#include "onednn/primitive_cache.h"
#include "onednn/runtime.h"
#include "parallel_elements.h"
#include "scratch_buffer.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <vector>

namespace bp::cpu {
namespace {

using dnnl::memory;

struct BatchNormPrimitives final : onednn::CachedPrimitives {
  dnnl::batch_normalization_forward primitive;
  memory::desc data, parameter, scratchpad;
};

// The parameters a primitive needs, as float32 arrays of C: running mean and variance, and
// weight (scale) and bias (shift) when given.
struct Parameters {
  explicit Parameters(int64_t channels)
      : buffer(static_cast<size_t>(4 * channels) * sizeof(float)), channels(channels) {}
  float* array(int index) const { return buffer.as<float>() + index * channels; }
  ScratchBuffer buffer;
  int64_t channels;
};

void put(const Parameters& parameters, int index, const TensorView& values) {
  const int64_t size[] = {parameters.channels};
  const int64_t unit[] = {1};
  copy_elements(size, {parameters.array(index), DType::Float32, unit}, elements_of(values));
}

const onednn::TypeSupport& batch_norm_support() {
  static const onednn::TypeSupport support([](memory::data_type type) {
    dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(
            dnnl::prop_kind::forward_inference,
            memory::desc({2, 8, 4, 1}, type, memory::format_tag::nchw), 1e-5f,
            dnnl::normalization_flags::use_global_stats),
        onednn::base_attributes(), onednn::engine());
  });
  return support;
}

// Input as oneDNN's (N, C) or (N, C, spatial, 1): the trailing dims of a dense array merge
// into one. (oneDNN 2.6 runs 3-D data on its reference implementation, 4-D on a fast one.)
memory::dims data_dims(const TensorView& input) {
  if (input.dim() == 2) return {input.size(0), input.size(1)};
  int64_t spatial = 1;
  for (int64_t d = 2; d < input.dim(); ++d) spatial *= input.size(d);
  return {input.size(0), input.size(1), spatial, 1};
}

void onednn_batch_norm(const TensorView& input, const TensorView* weight, const TensorView* bias,
                       const TensorView& mean, const TensorView& variance, double eps,
                       const TensorView& out) {
  const memory::data_type type = *onednn::data_type_of(out.dtype());
  const memory::dims dims = data_dims(input);
  auto flags = dnnl::normalization_flags::use_global_stats;
  if (weight) flags |= dnnl::normalization_flags::use_scale;
  if (bias) flags |= dnnl::normalization_flags::use_shift;

  onednn::CacheKey key(onednn::PrimitiveKind::BatchNormalization);
  key.add(static_cast<int64_t>(type)).add(std::span<const int64_t>(dims));
  key.add(static_cast<int64_t>(flags)).add(static_cast<double>(static_cast<float>(eps)));
  const onednn::ThreadCountScope threads;
  const auto p = onednn::primitive_cache().get<BatchNormPrimitives>(key, [&] {
    auto made = std::make_shared<BatchNormPrimitives>();
    made->data = memory::desc(dims, type, dims.size() == 2 ? memory::format_tag::nc
                                                           : memory::format_tag::nchw);
    made->parameter = memory::desc({dims[1]}, memory::data_type::f32, memory::format_tag::x);
    const dnnl::batch_normalization_forward::primitive_desc descriptor(
        dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, made->data,
                                                static_cast<float>(eps), flags),
        onednn::base_attributes(), onednn::engine());
    made->primitive = dnnl::batch_normalization_forward(descriptor);
    made->scratchpad = descriptor.scratchpad_desc();
    return std::shared_ptr<const BatchNormPrimitives>(std::move(made));
  });

  const Parameters parameters(dims[1]);
  put(parameters, 0, mean);
  put(parameters, 1, variance);
  if (weight) put(parameters, 2, *weight);
  if (bias) put(parameters, 3, *bias);
  const DenseInput dense_input(input, out.dtype());
  const DenseOutput dense_out(out, out.dtype());
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, onednn::wrap(p->data, dense_input.data())},
      {DNNL_ARG_DST, onednn::wrap(p->data, dense_out.data())},
      {DNNL_ARG_MEAN, onednn::wrap(p->parameter, parameters.array(0))},
      {DNNL_ARG_VARIANCE, onednn::wrap(p->parameter, parameters.array(1))},
  };
  if (weight) args.emplace(DNNL_ARG_SCALE, onednn::wrap(p->parameter, parameters.array(2)));
  if (bias) args.emplace(DNNL_ARG_SHIFT, onednn::wrap(p->parameter, parameters.array(3)));
  onednn::execute(p->primitive, p->scratchpad, std::move(args));
  dense_out.finish();
}

// out = (x - mean) * factor + shift, with factor = weight / sqrt(var + eps) and shift = bias
// per channel, in T's compute type.
template <typename T>
void batch_norm_loops(const TensorView& input, const TensorView* weight, const TensorView* bias,
                      const TensorView& mean, const TensorView& variance, double eps,
                      const TensorView& out) {
  using Compute = compute_t<T>;
  const int64_t channels = input.size(1);
  auto channel_value = [](const TensorView& view, int64_t c) {
    return static_cast<Compute>(view.data<const T>()[c * view.stride(0)]);
  };
  std::vector<Compute> means(static_cast<size_t>(channels)), factors(means.size()),
      shifts(means.size());
  for (int64_t c = 0; c < channels; ++c) {
    const auto i = static_cast<size_t>(c);
    means[i] = channel_value(mean, c);
    factors[i] = Compute(1) / std::sqrt(channel_value(variance, c) + static_cast<Compute>(eps));
    if (weight) factors[i] *= channel_value(*weight, c);
    shifts[i] = bias ? channel_value(*bias, c) : Compute(0);
  }
  // The per-channel arrays broadcast over input's shape: stride 1 along dim 1, 0 elsewhere.
  DimValues<int64_t> per_channel(static_cast<size_t>(input.dim()), 0);
  per_channel[1] = 1;
  parallel_map_elements(
      out.sizes(),
      [](Compute x, Compute m, Compute factor, Compute shift) { return (x - m) * factor + shift; },
      output_operand<T>(out), input_operand<T>(input),
      Operand<const Compute>{means.data(), per_channel.span()},
      Operand<const Compute>{factors.data(), per_channel.span()},
      Operand<const Compute>{shifts.data(), per_channel.span()});
}

}  // namespace

void batch_norm_inference_out(const TensorView& input, const TensorView* weight,
                              const TensorView* bias, const TensorView& running_mean,
                              const TensorView& running_var, double eps, const TensorView& out) {
  constexpr std::string_view op = "batch_norm";
  require_dtype(op, "out", out, input.dtype());
  require_dtype(op, "running_mean", running_mean, input.dtype());
  require_dtype(op, "running_var", running_var, input.dtype());
  if (weight) require_dtype(op, "weight", *weight, input.dtype());
  if (bias) require_dtype(op, "bias", *bias, input.dtype());
  if (out.numel() == 0) return;
  if (batch_norm_support().implements(out.dtype())) {
    return onednn_batch_norm(input, weight, bias, running_mean, running_var, eps, out);
  }
  visit_supported<FloatingDType>(op, out.dtype(), [&](auto tag) {
    batch_norm_loops<typename decltype(tag)::type>(input, weight, bias, running_mean, running_var,
                                                   eps, out);
  });
}

}  // namespace bp::cpu
