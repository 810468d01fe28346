// conv2d through oneDNN's convolution, with the bias fused, in the layout that runs faster for
// the problem (conv_layout.h): plain NCHW, or blocked layouts with the weights reordered once and
// kept while unchanged. float16 and bfloat16 go through oneDNN natively where this
// CPU's oneDNN has them, else one image at a time converted to float32.
#include "kernels/conv.h"

#include "kernels/copy_elements.h"
#include "kernels/conv_layout.h"
#include "kernels/dense.h"
#include "runtime/onednn.h"
#include "runtime/onednn_memory.h"
#include "runtime/packed_weights.h"
#include "runtime/primitive_cache.h"
#include "runtime/scratch_buffer.h"

#include <backplane/sdk/window2d.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace bp::cpu {
namespace {

using dnnl::memory;

memory::dims dims_of(std::span<const int64_t> sizes) { return {sizes.begin(), sizes.end()}; }

// Weights as oneDNN's grouped layout (groups, C_out / groups, C_in / groups, kH, kW), which is
// the same memory as (C_out, C_in / groups, kH, kW).
memory::dims weight_dims(const ConvGeometry& g) {
  if (g.groups == 1) return {g.out_channels, g.in_channels, g.window.kernel[0], g.window.kernel[1]};
  return {g.groups, g.out_channels / g.groups, g.in_channels / g.groups, g.window.kernel[0],
          g.window.kernel[1]};
}

// The right/bottom padding that gives oneDNN's output size formula the meta step's sizes.
memory::dims far_padding(const ConvGeometry& g) {
  const int64_t out_sizes[] = {g.out_height, g.out_width};
  const int64_t in_sizes[] = {g.height, g.width};
  memory::dims padding(2);
  for (int d = 0; d < 2; ++d) {
    const int64_t needed = (out_sizes[d] - 1) * g.window.stride[d] + g.window.span(d) -
                           in_sizes[d] - g.window.padding[d];
    padding[static_cast<size_t>(d)] = std::max(g.window.padding[d], needed);
  }
  return padding;
}

// Everything that decides a forward convolution's primitives, under `kind`. `threads`: the
// OpenMP thread count they are made and run with, which their blocking depends on.
onednn::CacheKey conv_key(onednn::PrimitiveKind kind, const ConvGeometry& g, memory::data_type type,
                          int threads) {
  onednn::CacheKey key(kind);
  key.add(static_cast<int64_t>(type)).add(static_cast<int64_t>(threads));
  key.add(g.batch).add(g.in_channels).add(g.height).add(g.width);
  key.add(g.out_channels).add(g.out_height).add(g.out_width).add(g.groups);
  key.add(std::span<const int64_t>(g.window.kernel)).add(std::span<const int64_t>(g.window.stride));
  key.add(std::span<const int64_t>(g.window.padding));
  key.add(std::span<const int64_t>(g.window.dilation));
  return key;
}

// One convolution's arrays: dense, in plain NCHW (weights OIHW) layouts.
struct ConvArrays {
  const void* input;
  const DLTensor& weight_tensor;  // the kernel's input the weights came from
  const void* weight;
  const float* bias;  // may be null
  void* out;
};

// The layouts a plan runs in: plain NCHW activations and OIHW weights; those oneDNN prefers
// for the problem (format any); or activations in blocks of 16 channels (nChw16c), the layout
// oneDNN's AVX-512 kernels were written for, with the weights oneDNN prefers beside them.
enum class PlanLayout { Plain, Preferred, ChannelBlocks };

// A convolution primitive with the layouts it takes, and the reorders from and to the plain
// layouts where they differ.
struct ConvPlan {
  PlanLayout layout;
  dnnl::convolution_forward primitive;
  memory::desc src, weights, bias, dst, scratchpad;
  std::optional<onednn::Reorder> src_in, weights_in, dst_out;

  bool reorders() const { return src_in || weights_in || dst_out; }

  // Call inside a ThreadCountScope; `weights_key` names weights_in's kept reorders.
  void run(const ConvArrays& arrays, const onednn::CacheKey& weights_key) const {
    std::optional<ScratchBuffer> src_buffer, dst_buffer;
    const void* source = arrays.input;
    if (src_in) {
      src_buffer.emplace(src.get_size());
      src_in->run(arrays.input, src_buffer->data());
      source = src_buffer->data();
    }
    std::optional<onednn::PackedWeight> packed;
    if (weights_in) {
      // The plans of one problem reorder its weights into layouts of their own.
      onednn::CacheKey key = weights_key;
      key.add(static_cast<int64_t>(layout));
      packed.emplace(arrays.weight_tensor, arrays.weight, *weights_in, std::move(key));
    }
    void* destination = arrays.out;
    if (dst_out) {
      dst_buffer.emplace(dst.get_size());
      destination = dst_buffer->data();
    }
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, onednn::wrap(src, source)},
        {DNNL_ARG_WEIGHTS, onednn::wrap(weights, packed ? packed->data() : arrays.weight)},
        {DNNL_ARG_DST, onednn::wrap(dst, destination)},
    };
    if (arrays.bias != nullptr) args.emplace(DNNL_ARG_BIAS, onednn::wrap(bias, arrays.bias));
    onednn::execute(primitive, scratchpad, std::move(args));
    if (dst_out) dst_out->run(destination, arrays.out);
  }
};

struct ConvPrimitives final : onednn::CachedPrimitives {
  ConvPlan plan;
};

ConvPlan make_plan(const ConvGeometry& g, memory::data_type type, bool with_bias,
                   PlanLayout layout) {
  using tag = memory::format_tag;
  const memory::desc plain_src({g.batch, g.in_channels, g.height, g.width}, type, tag::nchw);
  const memory::desc plain_weights(weight_dims(g), type, g.groups == 1 ? tag::oihw : tag::goihw);
  const memory::desc plain_dst({g.batch, g.out_channels, g.out_height, g.out_width}, type,
                               tag::nchw);
  const auto activations = [&](const memory::desc& plain) {
    switch (layout) {
      case PlanLayout::Plain: return plain;
      case PlanLayout::Preferred: return memory::desc(plain.dims(), type, tag::any);
      case PlanLayout::ChannelBlocks: return memory::desc(plain.dims(), type, tag::nChw16c);
    }
    return plain;
  };
  const memory::desc weights = layout == PlanLayout::Plain
                                   ? plain_weights
                                   : memory::desc(plain_weights.dims(), type, tag::any);
  ConvPlan plan;
  plan.layout = layout;
  plan.bias =
      with_bias ? memory::desc({g.out_channels}, memory::data_type::f32, tag::x) : memory::desc();
  const dnnl::convolution_forward::desc description(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      activations(plain_src), weights, plan.bias, activations(plain_dst), dims_of(g.window.stride),
      {g.window.dilation[0] - 1, g.window.dilation[1] - 1}, dims_of(g.window.padding),
      far_padding(g));
  const dnnl::convolution_forward::primitive_desc descriptor(description, onednn::base_attributes(),
                                                             onednn::engine());
  plan.primitive = dnnl::convolution_forward(descriptor);
  plan.scratchpad = descriptor.scratchpad_desc();
  plan.src = descriptor.src_desc();
  plan.weights = descriptor.weights_desc();
  plan.dst = descriptor.dst_desc();
  if (plan.src != plain_src) plan.src_in.emplace(plain_src, plan.src);
  if (plan.weights != plain_weights) plan.weights_in.emplace(plain_weights, plan.weights);
  if (plan.dst != plain_dst) plan.dst_out.emplace(plan.dst, plain_dst);
  return plan;
}

// The plan that ran fastest on `arrays`: each runs once to fault in its buffers and kept
// weights, then three times, the plans taking turns, and the fastest run of each counts.
ConvPlan fastest_plan(std::vector<ConvPlan> plans, const ConvArrays& arrays,
                      const onednn::CacheKey& weights_key) {
  using clock = std::chrono::steady_clock;
  const auto seconds = [&](const ConvPlan& plan) {
    const clock::time_point start = clock::now();
    plan.run(arrays, weights_key);
    return std::chrono::duration<double>(clock::now() - start).count();
  };
  for (const ConvPlan& plan : plans) seconds(plan);
  std::vector<double> best(plans.size(), std::numeric_limits<double>::infinity());
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < plans.size(); ++i) best[i] = std::min(best[i], seconds(plans[i]));
  }
  const auto fastest = std::min_element(best.begin(), best.end()) - best.begin();
  return std::move(plans[static_cast<size_t>(fastest)]);
}

// The primitives for `g`: plain, or in oneDNN's preferred layouts, as conv_layout_choice()
// says; where it leaves the choice to this problem's first call, the fastest on `arrays` of
// those two and the channel blocks, where oneDNN has a primitive for them.
std::shared_ptr<const ConvPrimitives> conv_primitives(const ConvGeometry& g, memory::data_type type,
                                                      const ConvArrays& arrays, int threads,
                                                      const onednn::CacheKey& weights_key) {
  const bool with_bias = arrays.bias != nullptr;
  onednn::CacheKey key = conv_key(onednn::PrimitiveKind::Convolution, g, type, threads);
  key.add(static_cast<int64_t>(with_bias));
  return onednn::primitive_cache().get<ConvPrimitives>(key, [&] {
    auto made = std::make_shared<ConvPrimitives>();
    const ConvLayoutChoice choice = conv_layout_choice();
    if (choice == ConvLayoutChoice::Plain) {
      made->plan = make_plan(g, type, with_bias, PlanLayout::Plain);
    } else if (choice == ConvLayoutChoice::Blocked) {
      made->plan = make_plan(g, type, with_bias, PlanLayout::Preferred);
    } else if (onednn::primitive_cache().capacity() == 0) {
      // With the cache off, a measurement would be repeated on every call.
      made->plan = make_plan(g, type, with_bias, PlanLayout::Plain);
    } else {
      std::vector<ConvPlan> plans;
      plans.push_back(make_plan(g, type, with_bias, PlanLayout::Plain));
      plans.push_back(make_plan(g, type, with_bias, PlanLayout::Preferred));
      try {
        ConvPlan channel_blocks = make_plan(g, type, with_bias, PlanLayout::ChannelBlocks);
        if (channel_blocks.src != plans.back().src) plans.push_back(std::move(channel_blocks));
      } catch (const dnnl::error&) {  // no primitive for these blocks on this CPU
      }
      made->plan = plans[1].reorders() ? fastest_plan(std::move(plans), arrays, weights_key)
                                       : std::move(plans[1]);
    }
    return std::shared_ptr<const ConvPrimitives>(std::move(made));
  });
}

// The window oneDNN is given for `g`, whose values oneDNN takes only where an int holds them:
// along a dim of one output, the stride only needs to reach past the padded input's end (no
// larger); along a dim of one tap, the dilation reads nothing and is 1.
plugin::Window2d onednn_window(const ConvGeometry& g) {
  plugin::Window2d window = g.window;
  const int64_t in_sizes[] = {g.height, g.width};
  const int64_t out_sizes[] = {g.out_height, g.out_width};
  for (int d = 0; d < 2; ++d) {
    const int64_t room = in_sizes[d] + 2 * window.padding[d] - window.span(d);
    if (out_sizes[d] == 1) window.stride[d] = std::min(window.stride[d], room + 1);
    if (window.kernel[d] == 1) window.dilation[d] = 1;
  }
  return window;
}

// Refuses, by name, a convolution with a value oneDNN does not take.
void check_onednn_takes(const ConvGeometry& g, std::string_view op) {
  const memory::dims far = far_padding(g);
  const plugin::Window2d& w = g.window;
  const bool takes =
      onednn::takes_dims({g.batch, g.in_channels, g.height, g.width, g.out_channels, g.out_height,
                          g.out_width, g.groups}) &&
      onednn::takes_dims({w.kernel[0], w.kernel[1], w.stride[0], w.stride[1], w.dilation[0] - 1,
                          w.dilation[1] - 1, w.padding[0], w.padding[1], far[0], far[1]});
  plugin::check(takes, std::string(op) +
                           ": the CPU backend convolves float32 and 16-bit floats through oneDNN, "
                           "which takes sizes, kernel sizes, strides, dilations and paddings up to "
                           "2147483647 only; convert to float64 (.to(bp::kFloat64)) to run on the "
                           "backend's own loops");
}

// Convolutions of fewer multiply-adds than this run on the calling thread alone: waking
// OpenMP's other threads costs more than they would save, and far more (tens of microseconds)
// where they sleep between regions (OMP_WAIT_POLICY=PASSIVE).
constexpr double kOneThreadConvWork = 65536;

int conv_threads(const ConvGeometry& g) {
  // In double: the product of sizes that oneDNN takes can pass int64's range.
  const double work = static_cast<double>(g.batch) * static_cast<double>(g.out_channels) *
                      static_cast<double>(g.out_height * g.out_width) *
                      static_cast<double>(g.in_channels / g.groups) *
                      static_cast<double>(g.window.kernel[0] * g.window.kernel[1]);
  return work < kOneThreadConvWork ? 1 : onednn::thread_count();
}

// One convolution of dense NCHW arrays of `type`.
void onednn_conv(const ConvGeometry& g, memory::data_type type, const ConvArrays& arrays) {
  const int thread_count = conv_threads(g);
  const onednn::ThreadCountScope threads(thread_count);
  const onednn::CacheKey weights_key =
      conv_key(onednn::PrimitiveKind::PackedWeights, g, type, thread_count);
  conv_primitives(g, type, arrays, thread_count, weights_key)->plan.run(arrays, weights_key);
}

const onednn::TypeSupport& conv_support() {
  static const onednn::TypeSupport support([](memory::data_type type) {
    using tag = memory::format_tag;
    const memory::desc image({1, 8, 4, 4}, type, tag::nchw);
    const memory::desc weights({8, 8, 3, 3}, type, tag::oihw);
    dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, image, weights,
                                        memory::desc(), image, {1, 1}, {0, 0}, {1, 1}, {1, 1}),
        onednn::base_attributes(), onednn::engine());
  });
  return support;
}

}  // namespace

// Converted images go one at a time, so that the converted copies stay one image large.
void conv2d_onednn(ConvGeometry g, const TensorView& input, const TensorView& weight,
                   const TensorView* bias, const TensorView& out) {
  g.window = onednn_window(g);
  check_onednn_takes(g, "conv2d");
  const DType compute = conv_support().compute_dtype(out.dtype());
  const memory::data_type type = *onednn::data_type_of(compute);
  const DenseInput dense_weight(weight, compute);
  std::optional<DenseInput> dense_bias;
  if (bias) dense_bias.emplace(*bias, DType::Float32);
  const float* bias_data = bias ? static_cast<const float*>(dense_bias->data()) : nullptr;

  if (compute == out.dtype()) {
    const DenseInput dense_input(input, compute);
    const DenseOutput dense_out(out, compute);
    onednn_conv(
        g, type,
        {dense_input.data(), weight.dlpack(), dense_weight.data(), bias_data, dense_out.data()});
    dense_out.finish();
    return;
  }
  ConvGeometry image = g;
  image.batch = 1;
  const int64_t input_sizes[] = {1, g.in_channels, g.height, g.width};
  const int64_t out_sizes[] = {1, g.out_channels, g.out_height, g.out_width};
  const size_t input_element = element_size(input.dtype());
  const size_t out_element = element_size(out.dtype());
  for (int64_t n = 0; n < g.batch; ++n) {
    const StridedElements input_image{input.data<char>() +
                                          n * input.stride(0) * static_cast<int64_t>(input_element),
                                      input.dtype(), input.strides()};
    const StridedElements out_image{
        out.data<char>() + n * out.stride(0) * static_cast<int64_t>(out_element), out.dtype(),
        out.strides()};
    const DenseInput dense_input(input_sizes, input_image, compute);
    const DenseOutput dense_out(out_sizes, out_image, compute);
    onednn_conv(
        image, type,
        {dense_input.data(), weight.dlpack(), dense_weight.data(), bias_data, dense_out.data()});
    dense_out.finish();
  }
}

namespace {

struct ConvBackwardPrimitives final : onednn::CachedPrimitives {
  dnnl::convolution_backward_data backward_data;
  dnnl::convolution_backward_weights backward_weights;
  memory::desc src, weights, bias, dst, data_scratchpad, weights_scratchpad;
};

// conv2d's backward primitives in float32 on plain NCHW arrays, made with the forward
// primitive they differentiate as oneDNN's hint.
std::shared_ptr<const ConvBackwardPrimitives> conv_backward_primitives(const ConvGeometry& g) {
  onednn::CacheKey key(onednn::PrimitiveKind::ConvolutionBackward);
  key.add(g.batch).add(g.in_channels).add(g.height).add(g.width);
  key.add(g.out_channels).add(g.out_height).add(g.out_width).add(g.groups);
  key.add(std::span<const int64_t>(g.window.kernel)).add(std::span<const int64_t>(g.window.stride));
  key.add(std::span<const int64_t>(g.window.padding));
  key.add(std::span<const int64_t>(g.window.dilation));
  return onednn::primitive_cache().get<ConvBackwardPrimitives>(key, [&] {
    using tag = memory::format_tag;
    constexpr memory::data_type f32 = memory::data_type::f32;
    auto made = std::make_shared<ConvBackwardPrimitives>();
    made->src = memory::desc({g.batch, g.in_channels, g.height, g.width}, f32, tag::nchw);
    made->weights = memory::desc(weight_dims(g), f32, g.groups == 1 ? tag::oihw : tag::goihw);
    made->bias = memory::desc({g.out_channels}, f32, tag::x);
    made->dst = memory::desc({g.batch, g.out_channels, g.out_height, g.out_width}, f32, tag::nchw);
    const memory::dims strides = dims_of(g.window.stride);
    const memory::dims dilations = {g.window.dilation[0] - 1, g.window.dilation[1] - 1};
    const memory::dims near = dims_of(g.window.padding);
    const memory::dims far = far_padding(g);
    const dnnl::convolution_forward::primitive_desc forward(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, made->src,
            made->weights, made->bias, made->dst, strides, dilations, near, far),
        onednn::base_attributes(), onednn::engine());
    const dnnl::convolution_backward_data::primitive_desc data(
        dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, made->src,
                                              made->weights, made->dst, strides, dilations, near,
                                              far),
        onednn::base_attributes(), onednn::engine(), forward);
    const dnnl::convolution_backward_weights::primitive_desc weights(
        dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, made->src,
                                                 made->weights, made->bias, made->dst, strides,
                                                 dilations, near, far),
        onednn::base_attributes(), onednn::engine(), forward);
    made->backward_data = dnnl::convolution_backward_data(data);
    made->backward_weights = dnnl::convolution_backward_weights(weights);
    made->data_scratchpad = data.scratchpad_desc();
    made->weights_scratchpad = weights.scratchpad_desc();
    return std::shared_ptr<const ConvBackwardPrimitives>(std::move(made));
  });
}

}  // namespace

void convolution_backward_onednn(ConvGeometry g, const TensorView& grad_output,
                                 const TensorView& input, const TensorView& weight,
                                 const TensorView& grad_input, const TensorView& grad_weight,
                                 const TensorView& grad_bias) {
  g.window = onednn_window(g);
  check_onednn_takes(g, "convolution_backward");
  const DenseInput dense_grad(grad_output, DType::Float32);
  const DenseInput dense_input(input, DType::Float32);
  const DenseInput dense_weight(weight, DType::Float32);
  const DenseOutput dense_grad_input(grad_input, DType::Float32);
  const DenseOutput dense_grad_weight(grad_weight, DType::Float32);
  const DenseOutput dense_grad_bias(grad_bias, DType::Float32);
  {
    const onednn::ThreadCountScope threads;
    const std::shared_ptr<const ConvBackwardPrimitives> p = conv_backward_primitives(g);
    onednn::execute(p->backward_data, p->data_scratchpad,
                    {{DNNL_ARG_DIFF_DST, onednn::wrap(p->dst, dense_grad.data())},
                     {DNNL_ARG_WEIGHTS, onednn::wrap(p->weights, dense_weight.data())},
                     {DNNL_ARG_DIFF_SRC, onednn::wrap(p->src, dense_grad_input.data())}});
    onednn::execute(p->backward_weights, p->weights_scratchpad,
                    {{DNNL_ARG_DIFF_DST, onednn::wrap(p->dst, dense_grad.data())},
                     {DNNL_ARG_SRC, onednn::wrap(p->src, dense_input.data())},
                     {DNNL_ARG_DIFF_WEIGHTS, onednn::wrap(p->weights, dense_grad_weight.data())},
                     {DNNL_ARG_DIFF_BIAS, onednn::wrap(p->bias, dense_grad_bias.data())}});
  }
  dense_grad_input.finish();
  dense_grad_weight.finish();
  dense_grad_bias.finish();
}

}  // namespace bp::cpu
