// Direct convolution: for each (image, output channel) plane, every weight scales a shifted,
// strided copy of an input plane into the output plane. The output columns each weight reaches
// inside the input are worked out once per weight, so the innermost loop has no bounds checks.
#include "kernels/conv.h"

#include "runtime/thread_pool.h"

#include <backplane/sdk/kernel_dtypes.h>

#include <algorithm>
#include <vector>

namespace bp::cpu {
namespace {

// Less work than this (multiply-adds) runs on the calling thread alone.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;

// The output positions o in [0, out_size) whose input position o * stride - padding + offset
// lies in [0, in_size).
struct Reach {
  int64_t begin, end;
};

Reach reach(int64_t offset, int64_t stride, int64_t padding, int64_t in_size, int64_t out_size) {
  const int64_t low = padding - offset;                 // o * stride >= low
  const int64_t high = in_size - 1 + padding - offset;  // o * stride <= high
  if (high < 0) return {0, 0};
  const int64_t begin = low <= 0 ? 0 : (low + stride - 1) / stride;
  return {begin, std::min(out_size, high / stride + 1)};
}

// The operands of one convolution, for computing its output planes one at a time.
struct Convolution {
  const ConvGeometry& g;
  const TensorView& input;
  const TensorView& weight;
  const TensorView* bias;
  const TensorView& out;

  // Output plane (n, co): the bias, plus every weight of co times the input it reaches.
  void plane(int64_t n, int64_t co) const {
    const plugin::Window2d& w = g.window;
    double* out_plane = out.data<double>() + n * out.stride(0) + co * out.stride(1);
    const double start = bias ? bias->data<const double>()[co * bias->stride(0)] : 0.0;
    for (int64_t y = 0; y < g.out_height; ++y) {
      for (int64_t x = 0; x < g.out_width; ++x)
        out_plane[y * out.stride(2) + x * out.stride(3)] = start;
    }
    const int64_t in_per_group = g.in_channels / g.groups;
    const int64_t first_in = (co / (g.out_channels / g.groups)) * in_per_group;
    for (int64_t local = 0; local < in_per_group; ++local) {
      const double* in_plane =
          input.data<const double>() + n * input.stride(0) + (first_in + local) * input.stride(1);
      for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
        for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
          const double scale =
              weight.data<const double>()[co * weight.stride(0) + local * weight.stride(1) +
                                          ky * weight.stride(2) + kx * weight.stride(3)];
          accumulate(scale, in_plane, out_plane, ky * w.dilation[0], kx * w.dilation[1]);
        }
      }
    }
  }

  // out_plane += scale * the input plane shifted by the tap at (y_offset, x_offset).
  void accumulate(double scale, const double* in_plane, double* out_plane, int64_t y_offset,
                  int64_t x_offset) const {
    const plugin::Window2d& w = g.window;
    const Reach rows = reach(y_offset, w.stride[0], w.padding[0], g.height, g.out_height);
    const Reach cols = reach(x_offset, w.stride[1], w.padding[1], g.width, g.out_width);
    for (int64_t y = rows.begin; y < rows.end; ++y) {
      const double* in_row =
          in_plane + (y * w.stride[0] - w.padding[0] + y_offset) * input.stride(2);
      double* out_row = out_plane + y * out.stride(2);
      for (int64_t x = cols.begin; x < cols.end; ++x) {
        const int64_t ix = x * w.stride[1] - w.padding[1] + x_offset;
        out_row[x * out.stride(3)] += scale * in_row[ix * input.stride(3)];
      }
    }
  }
};

}  // namespace

void conv2d_loops(const ConvGeometry& g, const TensorView& input, const TensorView& weight,
                  const TensorView* bias, const TensorView& out) {
  const Convolution convolution{g, input, weight, bias, out};
  const int64_t work_per_plane =
      std::max<int64_t>(1, g.out_height * g.out_width * (g.in_channels / g.groups) *
                               g.window.kernel[0] * g.window.kernel[1]);
  const int64_t grain = std::max<int64_t>(1, kMinParallelWork / work_per_plane);
  parallel_for(g.batch * g.out_channels, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      convolution.plane(task / g.out_channels, task % g.out_channels);
    }
  });
}

namespace {

// The operands of conv2d's backward pass, for computing gradients plane by plane in T's compute
// type C.
template <typename T>
struct ConvolutionBackward {
  using C = compute_t<T>;
  const ConvGeometry& g;
  const TensorView& grad_output;
  const TensorView& input;
  const TensorView& weight;

  int64_t in_per_group() const { return g.in_channels / g.groups; }
  int64_t out_per_group() const { return g.out_channels / g.groups; }

  const T* grad_plane(int64_t n, int64_t co) const {
    return grad_output.data<const T>() + n * grad_output.stride(0) + co * grad_output.stride(1);
  }

  // grad_input's plane (n, ci), as H * W sums in `sums`: every weight reaching from ci scales
  // its output gradient plane back onto the input positions it read.
  void input_plane(int64_t n, int64_t ci, std::vector<C>& sums) const {
    const plugin::Window2d& w = g.window;
    std::fill(sums.begin(), sums.end(), C{0});
    const int64_t local = ci % in_per_group();
    const int64_t first_out = (ci / in_per_group()) * out_per_group();
    for (int64_t co = first_out; co < first_out + out_per_group(); ++co) {
      const T* grad = grad_plane(n, co);
      for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
        const Reach rows =
            reach(ky * w.dilation[0], w.stride[0], w.padding[0], g.height, g.out_height);
        for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
          const Reach cols =
              reach(kx * w.dilation[1], w.stride[1], w.padding[1], g.width, g.out_width);
          const C scale = static_cast<C>(
              weight.data<const T>()[co * weight.stride(0) + local * weight.stride(1) +
                                     ky * weight.stride(2) + kx * weight.stride(3)]);
          for (int64_t y = rows.begin; y < rows.end; ++y) {
            const int64_t iy = y * w.stride[0] - w.padding[0] + ky * w.dilation[0];
            C* in_row = sums.data() + iy * g.width;
            const T* grad_row = grad + y * grad_output.stride(2);
            for (int64_t x = cols.begin; x < cols.end; ++x) {
              const int64_t ix = x * w.stride[1] - w.padding[1] + kx * w.dilation[1];
              in_row[ix] += scale * static_cast<C>(grad_row[x * grad_output.stride(3)]);
            }
          }
        }
      }
    }
  }

  // grad_weight[co, local, ky, kx]: the output gradients of co times the input each tap read.
  C weight_tap(int64_t co, int64_t local, int64_t ky, int64_t kx) const {
    const plugin::Window2d& w = g.window;
    const int64_t ci = (co / out_per_group()) * in_per_group() + local;
    const Reach rows = reach(ky * w.dilation[0], w.stride[0], w.padding[0], g.height, g.out_height);
    const Reach cols = reach(kx * w.dilation[1], w.stride[1], w.padding[1], g.width, g.out_width);
    C sum{0};
    for (int64_t n = 0; n < g.batch; ++n) {
      const T* grad = grad_plane(n, co);
      const T* in_plane = input.data<const T>() + n * input.stride(0) + ci * input.stride(1);
      for (int64_t y = rows.begin; y < rows.end; ++y) {
        const int64_t iy = y * w.stride[0] - w.padding[0] + ky * w.dilation[0];
        const T* grad_row = grad + y * grad_output.stride(2);
        const T* in_row = in_plane + iy * input.stride(2);
        for (int64_t x = cols.begin; x < cols.end; ++x) {
          const int64_t ix = x * w.stride[1] - w.padding[1] + kx * w.dilation[1];
          sum += static_cast<C>(grad_row[x * grad_output.stride(3)]) *
                 static_cast<C>(in_row[ix * input.stride(3)]);
        }
      }
    }
    return sum;
  }

  C bias_sum(int64_t co) const {
    C sum{0};
    for (int64_t n = 0; n < g.batch; ++n) {
      const T* grad = grad_plane(n, co);
      for (int64_t y = 0; y < g.out_height; ++y) {
        for (int64_t x = 0; x < g.out_width; ++x) {
          sum += static_cast<C>(grad[y * grad_output.stride(2) + x * grad_output.stride(3)]);
        }
      }
    }
    return sum;
  }
};

template <typename T>
void run_convolution_backward_loops(const ConvGeometry& g, const TensorView& grad_output,
                                    const TensorView& input, const TensorView& weight,
                                    const TensorView& grad_input, const TensorView& grad_weight,
                                    const TensorView& grad_bias) {
  using C = compute_t<T>;
  const ConvolutionBackward<T> backward{g, grad_output, input, weight};
  const int64_t taps = g.window.kernel[0] * g.window.kernel[1];
  const int64_t work_per_input_plane =
      std::max<int64_t>(1, backward.out_per_group() * taps * g.out_height * g.out_width);
  parallel_for(
      g.batch * g.in_channels, std::max<int64_t>(1, kMinParallelWork / work_per_input_plane),
      [&](int64_t begin, int64_t end) {
        std::vector<C> sums(static_cast<size_t>(g.height * g.width));
        for (int64_t task = begin; task < end; ++task) {
          const int64_t n = task / g.in_channels, ci = task % g.in_channels;
          backward.input_plane(n, ci, sums);
          T* plane = grad_input.data<T>() + n * grad_input.stride(0) + ci * grad_input.stride(1);
          for (int64_t y = 0; y < g.height; ++y) {
            for (int64_t x = 0; x < g.width; ++x) {
              plane[y * grad_input.stride(2) + x * grad_input.stride(3)] =
                  static_cast<T>(sums[static_cast<size_t>(y * g.width + x)]);
            }
          }
        }
      });
  const int64_t in_per_group = backward.in_per_group();
  const int64_t work_per_weight_plane =
      std::max<int64_t>(1, g.batch * taps * g.out_height * g.out_width);
  parallel_for(
      g.out_channels * in_per_group, std::max<int64_t>(1, kMinParallelWork / work_per_weight_plane),
      [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
          const int64_t co = task / in_per_group, local = task % in_per_group;
          for (int64_t ky = 0; ky < g.window.kernel[0]; ++ky) {
            for (int64_t kx = 0; kx < g.window.kernel[1]; ++kx) {
              grad_weight.data<T>()[co * grad_weight.stride(0) + local * grad_weight.stride(1) +
                                    ky * grad_weight.stride(2) + kx * grad_weight.stride(3)] =
                  static_cast<T>(backward.weight_tap(co, local, ky, kx));
            }
          }
        }
      });
  for (int64_t co = 0; co < g.out_channels; ++co) {
    grad_bias.data<T>()[co * grad_bias.stride(0)] = static_cast<T>(backward.bias_sum(co));
  }
}

}  // namespace

void convolution_backward_loops(const ConvGeometry& g, const TensorView& grad_output,
                                const TensorView& input, const TensorView& weight,
                                const TensorView& grad_input, const TensorView& grad_weight,
                                const TensorView& grad_bias) {
  plugin::visit_dtype<kernel_dtypes::convolution_backward_out>(grad_output.dtype(), [&](auto tag) {
    run_convolution_backward_loops<typename decltype(tag)::type>(
        g, grad_output, input, weight, grad_input, grad_weight, grad_bias);
  });
}

}  // namespace bp::cpu
