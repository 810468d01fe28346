// Which memory layout conv2d runs oneDNN's convolution in: plain NCHW, the blocked layouts
// oneDNN prefers for the problem (format `any`), or activations in blocks of 16 channels; the
// blocked ones with the input and output reordered on every call and the weights once
// (runtime/packed_weights.h). Blocked layouts run the JIT kernels that win for most 3x3
// convolutions; plain NCHW wins where the reorders cost more than they save (1x1 convolutions,
// few channels). By default the plugin times them on a problem's first call and keeps the
// fastest with the primitive; BACKPLANE_CPU_CONV_LAYOUT=plain or =blocked (oneDNN's preferred
// layouts) forces one (for comparisons and tests).
#pragma once

namespace bp::cpu {

enum class ConvLayoutChoice {
  Measured,  // the fastest on the problem's first call
  Plain,
  Blocked,  // oneDNN's preferred layouts
};

// BACKPLANE_CPU_CONV_LAYOUT's value (`value` may be null: unset) as a choice: "measured" (the
// default), "plain" or "blocked"; Measured with a warning (bp::plugin::warn) for anything else.
ConvLayoutChoice conv_layout_from(const char* value);

// The choice BACKPLANE_CPU_CONV_LAYOUT makes, read once.
ConvLayoutChoice conv_layout_choice();

}  // namespace bp::cpu
