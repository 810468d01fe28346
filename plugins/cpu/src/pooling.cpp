// max_pool2d, avg_pool2d and adaptive_avg_pool2d. oneDNN's pooling runs what it can express
// exactly, on plain NCHW arrays: undilated max pooling (then repaired where oneDNN's max
// differs from PyTorch's: NaN, and windows of -inf), averages that exclude the padding,
// averages that include it when no window runs past the padding (oneDNN then always divides by
// the kernel's area, as PyTorch does), and adaptive pooling whose windows tile the input evenly.
// 16-bit dtypes this CPU's oneDNN lacks go through it in float32 copies (every 16-bit value is
// exact in float32, so max pooling is unchanged, and averages are computed in float32 as the
// loops compute them). The rest, and float64, run on the plugin's own loops
// (pooling_loops.cpp).
#include "CPUNativeFunctions.h"

#include "dense.h"
#include "dtypes.h"
#include "onednn/memory.h"
#include "onednn/primitive_cache.h"
#include "onednn/runtime.h"
#include "pooling_loops.h"
#include "thread_pool.h"

#include <backplane/sdk/window2d.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

namespace bp::cpu {
namespace {

using dnnl::memory;
using plugin::Window2d;

struct PoolPrimitives final : onednn::CachedPrimitives {
  dnnl::pooling_v2_forward primitive;
  memory::desc src, dst, scratchpad;
};

// How far past the input's far edge the last window reaches: oneDNN's far padding. It is the
// near padding unless ceil_mode adds a window.
int64_t far_padding(const Window2d& w, int d, int64_t in_size, int64_t out_size) {
  return std::max(w.padding[d], (out_size - 1) * w.stride[d] + w.span(d) - in_size - w.padding[d]);
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
                                       dnnl::algorithm::pooling_max, image, pooled, {2, 2}, {2, 2},
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

// The most negative finite value of T: what oneDNN's max pooling starts from, so what it
// returns for a window that holds only -inf.
template <typename T>
compute_t<T> lowest_finite() {
  if constexpr (std::is_same_v<T, Half>) {
    return Half::to_float(0xfbff);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16::to_float(0xff7f);
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

// Where oneDNN's max pooling differs from PyTorch's, puts PyTorch's result into `out` (both
// dense NCHW): a window holding NaN gives NaN (oneDNN skips it), and a window holding only
// -inf gives -inf (oneDNN gives the lowest finite value). The input is scanned once for NaN,
// and outputs at the lowest finite value are worked out again from their windows.
template <typename T>
void repair_max_pool(const T* input, T* out, const Window2d& w, const TensorView& in_view,
                     const TensorView& out_view) {
  using Compute = compute_t<T>;
  const int64_t height = in_view.size(2), width = in_view.size(3);
  const int64_t out_height = out_view.size(2), out_width = out_view.size(3);
  // Calls mark(o) for the outputs o along dim d whose window reads input index i.
  auto readers = [&](int d, int64_t i, int64_t out_size, auto&& mark) {
    for (int64_t k = 0; k < w.kernel[d]; ++k) {
      const int64_t shifted = i + w.padding[d] - k * w.dilation[d];
      if (shifted >= 0 && shifted % w.stride[d] == 0 && shifted / w.stride[d] < out_size) {
        mark(shifted / w.stride[d]);
      }
    }
  };
  // The max of output (y, x)'s window: -inf when it holds only -inf.
  auto window_max = [&](const T* plane, int64_t y, int64_t x) {
    Compute best = -std::numeric_limits<Compute>::infinity();
    for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
      const int64_t iy = y * w.stride[0] - w.padding[0] + ky * w.dilation[0];
      if (iy < 0 || iy >= height) continue;
      for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
        const int64_t ix = x * w.stride[1] - w.padding[1] + kx * w.dilation[1];
        if (ix >= 0 && ix < width)
          best = std::max(best, static_cast<Compute>(plane[iy * width + ix]));
      }
    }
    return best;
  };
  const int64_t planes = in_view.size(0) * in_view.size(1);
  const int64_t grain =
      std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, height * width));
  parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const T* in_plane = input + plane * height * width;
      T* out_plane = out + plane * out_height * out_width;
      for (int64_t o = 0; o < out_height * out_width; ++o) {
        if (static_cast<Compute>(out_plane[o]) == lowest_finite<T>()) {
          out_plane[o] = static_cast<T>(window_max(in_plane, o / out_width, o % out_width));
        }
      }
      for (int64_t i = 0; i < height * width; ++i) {
        if (!std::isnan(static_cast<Compute>(in_plane[i]))) continue;
        readers(0, i / width, out_height, [&](int64_t y) {
          readers(1, i % width, out_width,
                  [&](int64_t x) { out_plane[y * out_width + x] = in_plane[i]; });
        });
      }
    }
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
  if (algorithm == dnnl::algorithm::pooling_max) {
    visit_supported<FloatingDType>("max_pool2d", dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      repair_max_pool(static_cast<const T*>(dense_input.data()), static_cast<T*>(dense_out.data()),
                      w, input, out);
    });
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
  // oneDNN 2.6 runs dilated pooling on its reference implementation only, which is slower
  // than the plugin's loops.
  const bool dilated = w.dilation[0] != 1 || w.dilation[1] != 1;
  const std::optional<DType> pooled = onednn_pooling_dtype(out.dtype());
  if (pooled && !dilated) return onednn_pool(dnnl::algorithm::pooling_max, w, self, out, *pooled);
  pool2d_loops(self, out, plugin::pooling_axis(w, 0, self.size(2), out.size(2), false),
               plugin::pooling_axis(w, 1, self.size(3), out.size(3), false), PoolReduction::Max,
               std::nullopt);
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
  if (pooled && !divisor_override) {
    if (!count_include_pad) {
      return onednn_pool(dnnl::algorithm::pooling_avg_exclude_padding, w, self, out, *pooled);
    }
    if (windows_stay_in_padding(w, self, out)) {
      return onednn_pool(dnnl::algorithm::pooling_avg_include_padding, w, self, out, *pooled);
    }
  }
  pool2d_loops(self, out,
               plugin::pooling_axis(w, 0, self.size(2), out.size(2), count_include_pad),
               plugin::pooling_axis(w, 1, self.size(3), out.size(3), count_include_pad),
               PoolReduction::Average, divisor_override);
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
    return onednn_pool(dnnl::algorithm::pooling_avg_exclude_padding, tiles, self, out, *pooled);
  }
  pool2d_loops(self, out, plugin::adaptive_axis(height, out_height),
               plugin::adaptive_axis(width, out_width),
               PoolReduction::Average, std::nullopt);
}

}  // namespace bp::cpu
