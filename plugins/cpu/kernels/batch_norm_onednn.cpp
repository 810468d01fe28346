// Batch normalization through oneDNN on a plain (N, C, spatial) array: batch_norm_inference
// with global statistics, and native_batch_norm's training and backward passes in float32; the
// statistics, weight and bias go to it as float32.
#include "kernels/batch_norm.h"
#include "kernels/batch_norm_training.h"

#include "kernels/copy_elements.h"
#include "kernels/dense.h"
#include "runtime/onednn.h"
#include "runtime/onednn_memory.h"
#include "runtime/primitive_cache.h"
#include "runtime/scratch_buffer.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>

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

}  // namespace

bool onednn_batch_norm_supports(DType dtype) { return batch_norm_support().implements(dtype); }

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
    made->data = memory::desc(dims, type,
                              dims.size() == 2 ? memory::format_tag::nc : memory::format_tag::nchw);
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

namespace {

struct BatchNormTrainingPrimitives final : onednn::CachedPrimitives {
  dnnl::batch_normalization_forward primitive;
  memory::desc data, parameter, scratchpad;
};

struct BatchNormBackwardPrimitives final : onednn::CachedPrimitives {
  dnnl::batch_normalization_backward primitive;
  memory::desc data, parameter, scratchpad;
};

memory::desc data_desc(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32,
                      dims.size() == 2 ? memory::format_tag::nc : memory::format_tag::nchw);
}

dnnl::batch_normalization_forward::desc training_desc(const memory::desc& data, double eps,
                                                      dnnl::normalization_flags flags) {
  return dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, data,
                                                 static_cast<float>(eps), flags);
}

}  // namespace

bool onednn_batch_norm_training_supported() {
  return batch_norm_support().implements(DType::Float32);
}

void onednn_batch_norm_training(const TensorView& input, const TensorView* weight,
                                const TensorView* bias, double eps, const TensorView& out,
                                const TensorView& save_mean, const TensorView& save_invstd) {
  const memory::dims dims = data_dims(input);
  auto flags = dnnl::normalization_flags::none;
  if (weight) flags |= dnnl::normalization_flags::use_scale;
  if (bias) flags |= dnnl::normalization_flags::use_shift;
  onednn::CacheKey key(onednn::PrimitiveKind::BatchNormalizationTraining);
  key.add(std::span<const int64_t>(dims)).add(static_cast<int64_t>(flags));
  key.add(static_cast<double>(static_cast<float>(eps)));
  const onednn::ThreadCountScope threads;
  const auto p = onednn::primitive_cache().get<BatchNormTrainingPrimitives>(key, [&] {
    auto made = std::make_shared<BatchNormTrainingPrimitives>();
    made->data = data_desc(dims);
    made->parameter = memory::desc({dims[1]}, memory::data_type::f32, memory::format_tag::x);
    const dnnl::batch_normalization_forward::primitive_desc descriptor(
        training_desc(made->data, eps, flags), onednn::base_attributes(), onednn::engine());
    made->primitive = dnnl::batch_normalization_forward(descriptor);
    made->scratchpad = descriptor.scratchpad_desc();
    return std::shared_ptr<const BatchNormTrainingPrimitives>(std::move(made));
  });
  // Arrays 0 and 1 receive the mean and the variance.
  const Parameters parameters(dims[1]);
  if (weight) put(parameters, 2, *weight);
  if (bias) put(parameters, 3, *bias);
  const DenseInput dense_input(input, DType::Float32);
  const DenseOutput dense_out(out, DType::Float32);
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
  for (int64_t c = 0; c < dims[1]; ++c) {
    save_mean.data<float>()[c * save_mean.stride(0)] = parameters.array(0)[c];
    save_invstd.data<float>()[c * save_invstd.stride(0)] =
        1.0f / std::sqrt(parameters.array(1)[c] + static_cast<float>(eps));
  }
}

// oneDNN takes the variance, which save_invstd gives as 1 / invstd^2 - eps. Its diff_scale and
// diff_shift are the gradients of weight and bias; without a weight it scales by ones.
void onednn_batch_norm_backward(const TensorView& grad_out, const TensorView& input,
                                const TensorView* weight, const TensorView& mean,
                                const TensorView& second, bool train, double eps,
                                const TensorView& grad_input, const TensorView& grad_weight,
                                const TensorView& grad_bias) {
  const memory::dims dims = data_dims(input);
  auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  if (!train) flags |= dnnl::normalization_flags::use_global_stats;
  onednn::CacheKey key(onednn::PrimitiveKind::BatchNormalizationBackward);
  key.add(std::span<const int64_t>(dims)).add(static_cast<int64_t>(flags));
  key.add(static_cast<double>(static_cast<float>(eps)));
  const onednn::ThreadCountScope threads;
  const auto p = onednn::primitive_cache().get<BatchNormBackwardPrimitives>(key, [&] {
    auto made = std::make_shared<BatchNormBackwardPrimitives>();
    made->data = data_desc(dims);
    made->parameter = memory::desc({dims[1]}, memory::data_type::f32, memory::format_tag::x);
    const dnnl::batch_normalization_forward::primitive_desc forward(
        training_desc(made->data, eps, flags), onednn::base_attributes(), onednn::engine());
    const dnnl::batch_normalization_backward::primitive_desc descriptor(
        dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward, made->data, made->data,
                                                 static_cast<float>(eps), flags),
        onednn::base_attributes(), onednn::engine(), forward);
    made->primitive = dnnl::batch_normalization_backward(descriptor);
    made->scratchpad = descriptor.scratchpad_desc();
    return std::shared_ptr<const BatchNormBackwardPrimitives>(std::move(made));
  });
  const int64_t channels = dims[1];
  // Mean, variance, scale and shift; oneDNN reads a shift wherever it computes its gradient.
  const Parameters parameters(channels);
  put(parameters, 0, mean);
  put(parameters, 1, second);
  if (train) {
    float* variance = parameters.array(1);
    for (int64_t c = 0; c < channels; ++c) {
      variance[c] = 1.0f / (variance[c] * variance[c]) - static_cast<float>(eps);
    }
  }
  if (weight) {
    put(parameters, 2, *weight);
  } else {
    std::fill_n(parameters.array(2), channels, 1.0f);
  }
  std::fill_n(parameters.array(3), channels, 0.0f);
  const DenseInput dense_grad(grad_out, DType::Float32);
  const DenseInput dense_input(input, DType::Float32);
  const DenseOutput dense_grad_input(grad_input, DType::Float32);
  const DenseOutput dense_grad_weight(grad_weight, DType::Float32);
  const DenseOutput dense_grad_bias(grad_bias, DType::Float32);
  onednn::execute(p->primitive, p->scratchpad,
                  {{DNNL_ARG_SRC, onednn::wrap(p->data, dense_input.data())},
                   {DNNL_ARG_DIFF_DST, onednn::wrap(p->data, dense_grad.data())},
                   {DNNL_ARG_MEAN, onednn::wrap(p->parameter, parameters.array(0))},
                   {DNNL_ARG_VARIANCE, onednn::wrap(p->parameter, parameters.array(1))},
                   {DNNL_ARG_SCALE, onednn::wrap(p->parameter, parameters.array(2))},
                   {DNNL_ARG_SHIFT, onednn::wrap(p->parameter, parameters.array(3))},
                   {DNNL_ARG_DIFF_SRC, onednn::wrap(p->data, dense_grad_input.data())},
                   {DNNL_ARG_DIFF_SCALE, onednn::wrap(p->parameter, dense_grad_weight.data())},
                   {DNNL_ARG_DIFF_SHIFT, onednn::wrap(p->parameter, dense_grad_bias.data())}});
  dense_grad_input.finish();
  dense_grad_weight.finish();
  dense_grad_bias.finish();
}

}  // namespace bp::cpu
