// max_pool2d, avg_pool2d and adaptive_avg_pool2d. Max pooling runs on the plugin's own loops
// for every dtype and window (pooling_loops.cpp): oneDNN 2.6 pools NCHW arrays with scalar
// code, about 575 instructions per output of a 3x3 window, and differs from PyTorch on NaN and
// on windows of -inf. oneDNN's pooling runs the averages it can express exactly, on plain NCHW
// arrays: averages that exclude the padding, averages that include it when no window runs past
// the padding (oneDNN then always divides by the kernel's area, as PyTorch does), and adaptive
// pooling whose windows tile the input evenly, where every size, kernel size, stride and padding
// fits in an int (oneDNN refuses others); 16-bit dtypes this CPU's oneDNN lacks go through it in
// float32 copies (averaged in float32, as the loops do). The other averages, and float64, run
// on the plugin's loops.
#include "CPUNativeFunctions.h"

#include "dense.h"
#include "dtypes.h"
#include "onednn/memory.h"
#include "onednn/primitive_cache.h"
#include "onednn/runtime.h"
#include "pooling_loops.h"

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

// Whether oneDNN takes the window and sizes of this pooling (each within an int).
bool onednn_takes(const Window2d& w, const TensorView& input, const TensorView& out) {
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

const onednn::TypeSupport& pooling_support() {
  static const onednn::TypeSupport support([](memory::data_type type) {
    const memory::desc image({1, 8, 4, 4}, type, memory::format_tag::nchw);
    const memory::desc pooled({1, 8, 2, 2}, type, memory::format_tag::nchw);
    dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                       dnnl::algorithm::pooling_avg_exclude_padding, image, pooled,
                                       {2, 2}, {2, 2},
                                       {0, 0}, {0, 0}, {0, 0}),
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

// Pooling through oneDNN in `dtype` (the tensors' own, or float32 for theirs), on dense copies
// where they are strided or of another dtype.
void onednn_pool(dnnl::algorithm algorithm, const Window2d& w, const TensorView& input,
                 const TensorView& out, DType dtype) {
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

// The dtype oneDNN pools tensors of `dtype` in, if any.
std::optional<DType> onednn_pooling_dtype(DType dtype) {
  if (pooling_support().implements(dtype)) return dtype;
  const bool sixteen_bit_float = dtype == DType::Float16 || dtype == DType::BFloat16;
  if (sixteen_bit_float && pooling_support().implements(DType::Float32)) return DType::Float32;
  return std::nullopt;
}

}  // namespace

void max_pool2d_out(const TensorView& self, std::span<const int64_t> kernel_size,
                    std::span<const int64_t> stride, std::span<const int64_t> padding,
                    std::span<const int64_t> dilation, bool ceil_mode, const TensorView& out) {
  (void)ceil_mode;  // out's size says whether the meta step added a window
  require_dtype("max_pool2d", "out", out, self.dtype());
  if (out.numel() == 0) return;
  const Window2d w = plugin::pooling_window(kernel_size, stride, padding, dilation);
  max_pool2d_loops(self, out, w);
}

void avg_pool2d_out(const TensorView& self, std::span<const int64_t> kernel_size,
                    std::span<const int64_t> stride, std::span<const int64_t> padding,
                    bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override,
                    const TensorView& out) {
  (void)ceil_mode;  // out's size says whether the meta step added a window
  require_dtype("avg_pool2d", "out", out, self.dtype());
  if (out.numel() == 0) return;
  const Window2d w = plugin::pooling_window(kernel_size, stride, padding, {});
  const std::optional<DType> pooled = onednn_pooling_dtype(out.dtype());
  if (pooled && !divisor_override && onednn_takes(w, self, out)) {
    if (!count_include_pad) {
      return onednn_pool(dnnl::algorithm::pooling_avg_exclude_padding, w, self, out, *pooled);
    }
    if (windows_stay_in_padding(w, self, out)) {
      return onednn_pool(dnnl::algorithm::pooling_avg_include_padding, w, self, out, *pooled);
    }
  }
  average_pool2d_loops(self, out,
                       plugin::pooling_axis(w, 0, self.size(2), out.size(2), count_include_pad),
                       plugin::pooling_axis(w, 1, self.size(3), out.size(3), count_include_pad),
                       divisor_override);
}

// Windows that tile the input evenly are an average pooling with kernel = stride = in / out.
void adaptive_avg_pool2d_out(const TensorView& self, std::span<const int64_t> output_size,
                             const TensorView& out) {
  (void)output_size;  // out's size is output_size, expanded by the meta step
  require_dtype("adaptive_avg_pool2d", "out", out, self.dtype());
  if (out.numel() == 0) return;
  const int64_t height = self.size(2), width = self.size(3);
  const int64_t out_height = out.size(2), out_width = out.size(3);
  const std::optional<DType> pooled = onednn_pooling_dtype(out.dtype());
  if (pooled && height % out_height == 0 && width % out_width == 0) {
    const Window2d tiles{{height / out_height, width / out_width},
                         {height / out_height, width / out_width},
                         {0, 0},
                         {1, 1}};
    if (onednn_takes(tiles, self, out)) {
      return onednn_pool(dnnl::algorithm::pooling_avg_exclude_padding, tiles, self, out, *pooled);
    }
  }
  average_pool2d_loops(self, out, plugin::adaptive_axis(height, out_height),
                       plugin::adaptive_axis(width, out_width), std::nullopt);
}

}  // namespace bp::cpu
