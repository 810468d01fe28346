// Which memory layout conv2d runs oneDNN's convolution in: plain NCHW, or the blocked layouts
// oneDNN picks for the problem (format `any`), with the input and output reordered on every call
// and the weights reordered once (runtime/packed_weights.h). Blocked layouts run the JIT kernels
// that win for most 3x3 convolutions; plain NCHW wins where the reorders cost more than they
// save (1x1 convolutions, few channels). By default the plugin times both on a problem's first
// call and keeps the faster with the primitive; BACKPLANE_CPU_CONV_LAYOUT=plain or =blocked
// forces one (for comparisons and tests).
#pragma once

namespace bp::cpu {

enum class ConvLayoutChoice {
  Measured,  // the faster of the two on the problem's first call
  Plain,
  Blocked,
};

// BACKPLANE_CPU_CONV_LAYOUT's value (`value` may be null: unset) as a choice: "measured" (the
// default), "plain" or "blocked"; Measured with a warning (bp::plugin::warn) for anything else.
ConvLayoutChoice conv_layout_from(const char* value);

// The choice BACKPLANE_CPU_CONV_LAYOUT makes, read once.
ConvLayoutChoice conv_layout_choice();

}  // namespace bp::cpu
