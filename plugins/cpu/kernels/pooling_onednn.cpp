// Average pooling through oneDNN's pooling, on plain NCHW arrays (dense copies where the
// tensors are strided), for the averages it computes as PyTorch does; 16-bit dtypes this CPU's
// oneDNN lacks go through it in float32 copies, averaged in float32 as the loops do.
#include "kernels/pooling_onednn.h"

#include "kernels/dense.h"
#include "runtime/onednn.h"
#include "runtime/onednn_memory.h"
#include "runtime/primitive_cache.h"

#include <backplane/sdk/window2d.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <utility>

namespace bp::cpu {
namespace {

using dnnl::memory;

struct PoolPrimitives final : onednn::CachedPrimitives {
  dnnl::pooling_v2_forward primitive;
  memory::desc src, dst, scratchpad;
};

// How far past the input's far edge the last window reaches: oneDNN's far padding. It is the
// near padding unless ceil_mode adds a window.
int64_t far_padding(const Window2d& w, int d, int64_t in_size, int64_t out_size) {
  return std::max(w.padding[d], (out_size - 1) * w.stride[d] + w.span(d) - in_size - w.padding[d]);
}

const onednn::TypeSupport& pooling_support() {
  static const onednn::TypeSupport support([](memory::data_type type) {
    const memory::desc image({1, 8, 4, 4}, type, memory::format_tag::nchw);
    const memory::desc pooled({1, 8, 2, 2}, type, memory::format_tag::nchw);
    dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                       dnnl::algorithm::pooling_avg_exclude_padding, image, pooled,
                                       {2, 2}, {2, 2}, {0, 0}, {0, 0}, {0, 0}),
        onednn::base_attributes(), onednn::engine());
  });
  return support;
}

std::shared_ptr<const PoolPrimitives> pool_primitives(dnnl::algorithm algorithm,
                                                      memory::data_type type, const Window2d& w,
                                                      const TensorView& input,
                                                      const TensorView& out) {
  onednn::CacheKey key(onednn::PrimitiveKind::Pooling);
  key.add(static_cast<int64_t>(algorithm)).add(static_cast<int64_t>(type));
  key.add(input.sizes()).add(out.sizes());
  key.add(std::span<const int64_t>(w.kernel)).add(std::span<const int64_t>(w.stride));
  key.add(std::span<const int64_t>(w.padding)).add(std::span<const int64_t>(w.dilation));
  return onednn::primitive_cache().get<PoolPrimitives>(key, [&] {
    auto made = std::make_shared<PoolPrimitives>();
    const memory::dims src_dims(input.sizes().begin(), input.sizes().end());
    const memory::dims dst_dims(out.sizes().begin(), out.sizes().end());
    made->src = memory::desc(src_dims, type, memory::format_tag::nchw);
    made->dst = memory::desc(dst_dims, type, memory::format_tag::nchw);
    const dnnl::pooling_v2_forward::desc description(
        dnnl::prop_kind::forward_inference, algorithm, made->src, made->dst,
        {w.stride[0], w.stride[1]}, {w.kernel[0], w.kernel[1]},
        {w.dilation[0] - 1, w.dilation[1] - 1}, {w.padding[0], w.padding[1]},
        {far_padding(w, 0, input.size(2), out.size(2)),
         far_padding(w, 1, input.size(3), out.size(3))});
    const dnnl::pooling_v2_forward::primitive_desc descriptor(
        description, onednn::base_attributes(), onednn::engine());
    made->primitive = dnnl::pooling_v2_forward(descriptor);
    made->scratchpad = descriptor.scratchpad_desc();
    return std::shared_ptr<const PoolPrimitives>(std::move(made));
  });
}

}  // namespace

bool onednn_pooling_takes(const Window2d& w, const TensorView& input, const TensorView& out) {
  for (int d = 0; d < 2; ++d) {
    if (!onednn::takes_dims({input.size(2 + d), out.size(2 + d), w.kernel[d], w.stride[d],
                             w.dilation[d] - 1, w.padding[d],
                             far_padding(w, d, input.size(2 + d), out.size(2 + d))})) {
      return false;
    }
  }
  return onednn::takes_dims({input.size(0), input.size(1)});
}

bool windows_stay_in_padding(const Window2d& w, const TensorView& input, const TensorView& out) {
  for (int d = 0; d < 2; ++d) {
    if (far_padding(w, d, input.size(2 + d), out.size(2 + d)) != w.padding[d]) return false;
  }
  return true;
}

std::optional<DType> onednn_pooling_dtype(DType dtype) {
  if (pooling_support().implements(dtype)) return dtype;
  const bool sixteen_bit_float = dtype == DType::Float16 || dtype == DType::BFloat16;
  if (sixteen_bit_float && pooling_support().implements(DType::Float32)) return DType::Float32;
  return std::nullopt;
}

void onednn_average_pool(const Window2d& w, const TensorView& input, const TensorView& out,
                         DType dtype, bool include_padding) {
  const dnnl::algorithm algorithm = include_padding ? dnnl::algorithm::pooling_avg_include_padding
                                                    : dnnl::algorithm::pooling_avg_exclude_padding;
  const memory::data_type type = *onednn::data_type_of(dtype);
  const DenseInput dense_input(input, dtype);
  const DenseOutput dense_out(out, dtype);
  {
    const onednn::ThreadCountScope threads;
    const std::shared_ptr<const PoolPrimitives> p = pool_primitives(algorithm, type, w, input, out);
    onednn::execute(p->primitive, p->scratchpad,
                    {{DNNL_ARG_SRC, onednn::wrap(p->src, dense_input.data())},
                     {DNNL_ARG_DST, onednn::wrap(p->dst, dense_out.data())}});
  }
  dense_out.finish();
}

}  // namespace bp::cpu
