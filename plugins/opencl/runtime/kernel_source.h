// The OpenCL C sources of the plugin's programs. The files under kernels/ are embedded at build
// time (cmake/BackplaneEmbed.cmake); a program is common.cl, groups.cl for the group kernels,
// then its family's file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bp::opencl {

struct EmbeddedFile {
  const char* name;  // "elementwise.cl"
  const char* text;
};
extern const EmbeddedFile kEmbeddedKernelFiles[];
extern const size_t kEmbeddedKernelFileCount;

// One program each; all but Copy are built once per dtype (-DDTYPE).
enum class KernelSource {
  Elementwise,
  Copy,
  Reduction,
  Normalization,
  Matmul,
  Spatial,
  Attention,
  Loss
};

// "elementwise.cl": the family's file, which names the program in messages and cache keys.
std::string_view source_name(KernelSource source);

// The whole program text. Each file starts with a #line directive, so that a build log names
// the right file and line.
const std::string& program_text(KernelSource source);

}  // namespace bp::opencl
