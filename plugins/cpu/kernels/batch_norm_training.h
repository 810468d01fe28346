// Batch normalisation with batch statistics (native_batch_norm when training) and the backward
// pass of both modes (native_batch_norm_backward): through oneDNN in float32
// (batch_norm_onednn.cpp), and on the plugin's loops for every floating dtype. The loops read
// and write dense (N, C, spatial) copies in the dtype's compute type, one channel per task.
#pragma once

#include "kernels/dense.h"
#include "kernels/strided_loop.h"
#include "runtime/thread_pool.h"

#include <cmath>
#include <cstdint>

namespace bp::cpu {

// Whether oneDNN runs batch normalisation's training and backward passes on float32.
bool onednn_batch_norm_training_supported();

// out = (input - mean) * invstd * weight + bias per channel, with each channel's batch mean and
// invstd = 1 / sqrt(biased variance + eps) written to save_mean and save_invstd; float32 views.
void onednn_batch_norm_training(const TensorView& input, const TensorView* weight,
                                const TensorView* bias, double eps, const TensorView& out,
                                const TensorView& save_mean, const TensorView& save_invstd);

// The gradients of input, weight and bias; `mean` and `second` are save_mean and save_invstd
// when `train`, else running_mean and running_var. float32 views; weight may be absent.
void onednn_batch_norm_backward(const TensorView& grad_out, const TensorView& input,
                                const TensorView* weight, const TensorView& mean,
                                const TensorView& second, bool train, double eps,
                                const TensorView& grad_input, const TensorView& grad_weight,
                                const TensorView& grad_bias);

namespace batch_norm_detail {

// A tensor of at least 2 dims as a dense (batch, channels, spatial) array.
struct ChannelArray {
  int64_t batch, channels, spatial;

  explicit ChannelArray(const TensorView& t) : batch(t.size(0)), channels(t.size(1)), spatial(1) {
    for (int64_t d = 2; d < t.dim(); ++d) spatial *= t.size(d);
  }
  int64_t count() const { return batch * spatial; }  // elements per channel
  // Calls fn(offset) for each element of channel c, offset into the dense array.
  template <typename Fn>
  void for_channel(int64_t c, Fn&& fn) const {
    for (int64_t n = 0; n < batch; ++n) {
      const int64_t start = (n * channels + c) * spatial;
      for (int64_t s = 0; s < spatial; ++s) fn(start + s);
    }
  }
};

template <typename T>
compute_t<T> channel_value(const TensorView* view, int64_t c, compute_t<T> absent) {
  return view ? static_cast<compute_t<T>>(view->data<const T>()[c * view->stride(0)]) : absent;
}

template <typename T>
void set_channel_value(const TensorView& view, int64_t c, compute_t<T> value) {
  view.data<T>()[c * view.stride(0)] = static_cast<T>(value);
}

}  // namespace batch_norm_detail

// onednn_batch_norm_training's computation for T, in T's compute type: the mean, then the
// variance from the deviations from it.
template <typename T>
void batch_norm_training_loops(const TensorView& input, const TensorView* weight,
                               const TensorView* bias, double eps, const TensorView& out,
                               const TensorView& save_mean, const TensorView& save_invstd) {
  using C = compute_t<T>;
  using namespace batch_norm_detail;
  const ChannelArray array(input);
  const DenseInput dense_input(input, kDTypeOf<C>);
  const DenseOutput dense_out(out, kDTypeOf<C>);
  const C* x = static_cast<const C*>(dense_input.data());
  C* y = static_cast<C*>(dense_out.data());
  const C count = static_cast<C>(array.count());
  parallel_for(array.channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      C sum{0};
      array.for_channel(c, [&](int64_t i) { sum += x[i]; });
      const C mean = array.count() > 0 ? sum / count : C{0};
      C squares{0};
      array.for_channel(c, [&](int64_t i) { squares += (x[i] - mean) * (x[i] - mean); });
      const C variance = array.count() > 0 ? squares / count : C{0};
      const C invstd = C{1} / std::sqrt(variance + static_cast<C>(eps));
      const C factor = invstd * channel_value<T>(weight, c, C{1});
      const C shift = channel_value<T>(bias, c, C{0});
      array.for_channel(c, [&](int64_t i) { y[i] = (x[i] - mean) * factor + shift; });
      set_channel_value<T>(save_mean, c, mean);
      set_channel_value<T>(save_invstd, c, invstd);
    }
  });
  dense_out.finish();
}

// onednn_batch_norm_backward's computation for T, in T's compute type, with PyTorch's formulas:
// when train, grad_input = (g - mean(g) - xhat * mean(g * xhat)) * invstd * weight, where
// xhat = (x - mean) * invstd; otherwise g * invstd * weight. grad_weight = sum(g * xhat),
// grad_bias = sum(g).
template <typename T>
void batch_norm_backward_loops(const TensorView& grad_out, const TensorView& input,
                               const TensorView* weight, const TensorView& mean,
                               const TensorView& second, bool train, double eps,
                               const TensorView& grad_input, const TensorView& grad_weight,
                               const TensorView& grad_bias) {
  using C = compute_t<T>;
  using namespace batch_norm_detail;
  const ChannelArray array(input);
  const DenseInput dense_grad(grad_out, kDTypeOf<C>);
  const DenseInput dense_input(input, kDTypeOf<C>);
  const DenseOutput dense_grad_input(grad_input, kDTypeOf<C>);
  const C* g = static_cast<const C*>(dense_grad.data());
  const C* x = static_cast<const C*>(dense_input.data());
  C* gi = static_cast<C*>(dense_grad_input.data());
  const C count = static_cast<C>(array.count());
  parallel_for(array.channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const C m = channel_value<T>(&mean, c, C{0});
      const C s = channel_value<T>(&second, c, C{0});
      const C invstd = train ? s : C{1} / std::sqrt(s + static_cast<C>(eps));
      C sum{0}, dot{0};
      array.for_channel(c, [&](int64_t i) {
        sum += g[i];
        dot += g[i] * (x[i] - m);
      });
      const C scale = invstd * channel_value<T>(weight, c, C{1});
      if (train) {
        const C grad_mean = sum / count;
        const C projection = dot * invstd * invstd / count;
        array.for_channel(
            c, [&](int64_t i) { gi[i] = (g[i] - grad_mean - (x[i] - m) * projection) * scale; });
      } else {
        array.for_channel(c, [&](int64_t i) { gi[i] = g[i] * scale; });
      }
      set_channel_value<T>(grad_weight, c, dot * invstd);
      set_channel_value<T>(grad_bias, c, sum);
    }
  });
  dense_grad_input.finish();
}

}  // namespace bp::cpu
