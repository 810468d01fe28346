// batch_norm_inference through oneDNN's batch normalization with global statistics, on a plain
// (N, C, spatial) array; the running statistics, weight and bias go to it as float32.
#include "kernels/batch_norm.h"

#include "kernels/copy_elements.h"
#include "kernels/dense.h"
#include "runtime/onednn.h"
#include "runtime/onednn_memory.h"
#include "runtime/primitive_cache.h"
#include "runtime/scratch_buffer.h"

#include <oneapi/dnnl/dnnl.hpp>

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

}  // namespace bp::cpu
