// Direct convolution: for each (image, output channel) plane, every weight scales a shifted,
// strided copy of an input plane into the output plane. The output columns each weight reaches
// inside the input are worked out once per weight, so the innermost loop has no bounds checks.
#include "kernels/conv.h"

#include "runtime/thread_pool.h"

#include <algorithm>

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

}  // namespace bp::cpu
