#include "runtime/kernel_source.h"

#include <backplane/sdk/status.hpp>

#include <array>

namespace bp::opencl {
namespace {

constexpr std::array<std::string_view, 8> kFamilyFiles = {
    "elementwise.cl", "copy.cl",    "reduction.cl", "normalization.cl",
    "matmul.cl",      "spatial.cl", "attention.cl", "loss.cl"};

std::string_view embedded_text(std::string_view name) {
  for (size_t i = 0; i < kEmbeddedKernelFileCount; ++i) {
    if (name == kEmbeddedKernelFiles[i].name) return kEmbeddedKernelFiles[i].text;
  }
  throw plugin::Error(BP_STATUS_INTERNAL,
                      "opencl: the kernel file " + std::string(name) + " was not embedded");
}

bool uses_groups(KernelSource source) {
  return source == KernelSource::Reduction || source == KernelSource::Normalization ||
         source == KernelSource::Loss;
}

std::string assemble(KernelSource source) {
  std::string text;
  auto append = [&text](std::string_view name) {
    text += "#line 1 \"" + std::string(name) + "\"\n";
    text += embedded_text(name);
    text += "\n";
  };
  append("common.cl");
  if (uses_groups(source)) append("groups.cl");
  append(source_name(source));
  return text;
}

}  // namespace

std::string_view source_name(KernelSource source) {
  return kFamilyFiles[static_cast<size_t>(source)];
}

const std::string& program_text(KernelSource source) {
  // Assembled once; the embedded files never change while the process runs.
  static const std::array<std::string, kFamilyFiles.size()> texts = [] {
    std::array<std::string, kFamilyFiles.size()> all;
    for (size_t i = 0; i < all.size(); ++i) all[i] = assemble(static_cast<KernelSource>(i));
    return all;
  }();
  return texts[static_cast<size_t>(source)];
}

}  // namespace bp::opencl
