// Direct convolution: for each (image, output channel) plane, every weight scales a shifted,
// strided copy of an input plane into the output plane. The output columns each weight reaches
// inside the input are worked out once per weight, so the innermost loop has no bounds checks.
#include "conv_loops.h"

#include "thread_pool.h"

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
  const int64_t low = padding - offset;  // o * stride >= low
  const int64_t high = in_size - 1 + padding - offset;  // o * stride <= high
  if (high < 0) return {0, 0};
  const int64_t begin = low <= 0 ? 0 : (low + stride - 1) / stride;
  return {begin, std::min(out_size, high / stride + 1)};
}

}  // namespace

void conv2d_loops(const ConvGeometry& g, const TensorView& input, const TensorView& weight,
                  const TensorView* bias, const TensorView& out) {
  const auto* in = input.data<const double>();
  const auto* w = weight.data<const double>();
  const double* b = bias ? bias->data<const double>() : nullptr;
  auto* o = out.data<double>();
  const plugin::Window2d& win = g.window;
  const int64_t in_per_group = g.in_channels / g.groups;
  const int64_t out_per_group = g.out_channels / g.groups;
  const int64_t work_per_plane =
      std::max<int64_t>(1, g.out_height * g.out_width * in_per_group * win.kernel[0] * win.kernel[1]);

  parallel_for(g.batch * g.out_channels, std::max<int64_t>(1, kMinParallelWork / work_per_plane),
               [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / g.out_channels, co = task % g.out_channels;
      double* plane = o + n * out.stride(0) + co * out.stride(1);
      const double start = b ? b[co * bias->stride(0)] : 0.0;
      for (int64_t y = 0; y < g.out_height; ++y) {
        for (int64_t x = 0; x < g.out_width; ++x) plane[y * out.stride(2) + x * out.stride(3)] = start;
      }
      for (int64_t local = 0; local < in_per_group; ++local) {
        const int64_t ci = (co / out_per_group) * in_per_group + local;
        const double* in_plane = in + n * input.stride(0) + ci * input.stride(1);
        for (int64_t ky = 0; ky < win.kernel[0]; ++ky) {
          const int64_t y_offset = ky * win.dilation[0];
          const Reach rows = reach(y_offset, win.stride[0], win.padding[0], g.height, g.out_height);
          for (int64_t kx = 0; kx < win.kernel[1]; ++kx) {
            const int64_t x_offset = kx * win.dilation[1];
            const Reach cols = reach(x_offset, win.stride[1], win.padding[1], g.width, g.out_width);
            const double weight_value = w[co * weight.stride(0) + local * weight.stride(1) +
                                          ky * weight.stride(2) + kx * weight.stride(3)];
            for (int64_t y = rows.begin; y < rows.end; ++y) {
              const int64_t iy = y * win.stride[0] - win.padding[0] + y_offset;
              const double* in_row = in_plane + iy * input.stride(2);
              double* out_row = plane + y * out.stride(2);
              for (int64_t x = cols.begin; x < cols.end; ++x) {
                const int64_t ix = x * win.stride[1] - win.padding[1] + x_offset;
                out_row[x * out.stride(3)] += weight_value * in_row[ix * input.stride(3)];
              }
            }
          }
        }
      }
    }
  });
}

}  // namespace bp::cpu
