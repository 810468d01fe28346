// The plugin's own programs: every kernel the ops launch builds, for every dtype, on every
// OpenCL device (through the runtime, its disk cache included). Catches a kernel that fails to
// compile on some dtype or device without going through the core.
#include "runtime/kernel_source.h"
#include "runtime/runtime.h"

#include <backplane/sdk/dtype.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

namespace {

using bp::DType;
using bp::opencl::Device;
using bp::opencl::KernelSource;
using bp::opencl::Runtime;

const char* const kDtypeNames[] = {"float32", "float64", "float16", "bfloat16", "int8",
                                   "uint8",   "int32",   "int64",   "bool"};

// Creates each kernel of `names` in `program` on `device`.
void check_kernels(Device& device, cl_program program, const std::vector<std::string>& names) {
  std::lock_guard lock(device.launch_mutex());
  for (const std::string& name : names) {
    CHECK_NOTHROW_MESSAGE(device.kernel(program, name.c_str()), name);
  }
}

std::vector<std::string> elementwise_kernels(DType dtype) {
  std::vector<std::string> names = {"add", "sub",    "mul",  "maximum", "minimum",
                                    "neg", "abs_",   "relu", "eq",      "lt",
                                    "gt",  "where_", "fill", "arange",  "indexed_add"};
  if (bp::is_floating_point(dtype)) {
    for (const char* name : {"div", "exp_", "log_", "sqrt_", "tanh_", "sigmoid", "gelu_erf",
                             "gelu_tanh", "threshold_backward", "gelu_erf_backward",
                             "gelu_tanh_backward", "sgd_step", "adamw_step"}) {
      names.push_back(name);
    }
  }
  return names;
}

// Every program of one dtype on `device`, and the kernels each one's ops launch.
void check_dtype_programs(Device& device, DType dtype) {
  check_kernels(device, device.program(KernelSource::Elementwise, dtype),
                elementwise_kernels(dtype));
  check_kernels(device, device.program(KernelSource::Reduction, dtype), {"sum", "max_"});
  if (dtype != DType::Bool) {
    check_kernels(device, device.program(KernelSource::Matmul, dtype), {"matmul", "matmul_rows"});
  }
  if (bp::is_floating_point(dtype)) {
    check_kernels(device, device.program(KernelSource::Normalization, dtype),
                  {"softmax", "layer_norm", "rms_norm", "softmax_backward", "layer_norm_backward",
                   "layer_norm_backward_parameters", "batch_norm_training", "batch_norm_backward"});
    check_kernels(device, device.program(KernelSource::Spatial, dtype),
                  {"conv2d", "conv2d_rows", "pool2d", "pool2d_backward", "conv2d_backward_input",
                   "conv2d_backward_weight"});
    check_kernels(device, device.program(KernelSource::Loss, dtype),
                  {"nll_loss", "nll_loss_backward"});
    check_kernels(device, device.program(KernelSource::Attention, dtype),
                  {"fused_attention", "transpose_keys", "fused_attention_rows"});
  }
}

// The copy program, with a kernel for each pair of dtypes the device holds.
void check_copy_program(Device& device) {
  std::vector<std::string> copies = {"copy_bits8", "copy_bits16", "copy_bits32", "copy_bits64"};
  for (const char* from : kDtypeNames) {
    for (const char* to : kDtypeNames) {
      const bool needs_fp64 = std::string(from) == "float64" || std::string(to) == "float64";
      if (!needs_fp64 || device.has_fp64())
        copies.push_back(std::string("copy_") + from + "_to_" + to);
    }
  }
  check_kernels(device, device.program(KernelSource::Copy, std::nullopt), copies);
}

}  // namespace

// One subcase per dtype ("Float", "Long", ...) and one for the copies: CTest builds each in a
// run of its own, side by side, before any other test that uses OpenCL
// (tests/opencl/CMakeLists.txt), so that those load every program from the shared disk cache
// rather than compiling it again.
TEST_CASE("programs: every kernel builds for every dtype on every device") {
  Runtime& runtime = Runtime::get();
  if (runtime.devices().count() == 0) {
    MESSAGE("skipped: " << runtime.devices().no_devices_reason());
    return;
  }
  for (int index = 0; index < runtime.devices().count(); ++index) {
    Device& device = runtime.device(index);
    INFO(device.label() << ": " << device.description());
    for (DType dtype : bp::kAllDTypes) {
      if (dtype == DType::Float64 && !device.has_fp64()) continue;
      const std::string name(bp::dtype_name(dtype));
      SUBCASE(name.c_str()) { check_dtype_programs(device, dtype); }
    }
    SUBCASE("copies") { check_copy_program(device); }
  }
}

TEST_CASE("programs: Double on a device without fp64 is refused rather than miscomputed") {
  Runtime& runtime = Runtime::get();
  for (int index = 0; index < runtime.devices().count(); ++index) {
    Device& device = runtime.device(index);
    INFO(device.label());
    CHECK_NOTHROW(device.require_double_precision_for("exp", DType::Float32));
    if (device.has_fp64()) {
      CHECK_NOTHROW(device.require_double_precision_for("exp", DType::Float64));
      continue;
    }
    const std::string refusal = "exp: " + device.label() + " has no double precision (cl_khr_fp64)";
    CHECK_THROWS_WITH_AS(device.require_double_precision_for("exp", DType::Float64),
                         doctest::Contains(refusal.c_str()), bp::plugin::Error);
    CHECK_THROWS_WITH_AS(device.program(KernelSource::Elementwise, DType::Float64),
                         doctest::Contains("cl_khr_fp64"), bp::plugin::Error);
  }
}

// Meaningful where no platform exists: ctest runs it again with OCL_ICD_VENDORS pointing at an
// empty folder.
TEST_CASE("runtime: without an OpenCL platform there are no devices and the reason says why") {
  Runtime& runtime = Runtime::get();
  if (runtime.devices().count() > 0) {
    MESSAGE("skipped: this environment has OpenCL devices");
    return;
  }
  CHECK(runtime.devices().no_devices_reason().find("OpenCL") != std::string::npos);
  CHECK_THROWS_AS(runtime.device(0), bp::plugin::Error);
}
