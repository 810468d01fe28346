// One OpenCL device as the plugin uses it: its own context and in-order queue, what it can do
// (fp64, work-group sizes), the strings device_properties hands out, and its programs.
#pragma once

#include "runtime/cl_call.h"
#include "runtime/kernel_source.h"
#include "runtime/program_builder.h"

#include <backplane/sdk/dtype.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace bp::opencl {

// The two shapes of the kernels of matrix products and conv2d, of group kernels' work, and of
// elementwise kernels' strided form.
enum class KernelShape {
  Gpu,  // a work-group shares tiles through local memory (matmul), or a work-item computes one
        // output (conv2d) or element: what GPUs want
  Cpu,  // a work-item computes a block of outputs alone, with no local memory and no barriers,
        // its sums as vector instructions (matmul_rows, conv2d_rows), walks a whole group
        // where there are groups enough (group_work), and walks tiles of elements
        // (-DWALK_IN_TILES): what CPU drivers want
};

// The shape BACKPLANE_OPENCL_KERNEL_SHAPE names ("gpu" or "cpu"); none for any other value.
std::optional<KernelShape> kernel_shape_named(std::string_view name);

class Device {
 public:
  // Opens `device` as the plugin's device number `index`; throws an Error when the driver
  // refuses a context or queue. It runs kernels of `shape`, or without one those of its device
  // type (CPU devices the Cpu shape, all others the Gpu shape).
  Device(int index, cl_platform_id platform, cl_device_id device, ProgramCache* cache,
         std::optional<KernelShape> shape = std::nullopt);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int index() const { return index_; }
  // "pthread-haswell-AMD EPYC 7B13"; "platform: ..., type: CPU, OpenCL C 1.2, fp64: yes, ...".
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  // "opencl:0 (pthread-haswell-AMD EPYC 7B13)", for messages.
  const std::string& label() const { return label_; }
  uint64_t total_memory() const { return total_memory_; }
  uint64_t max_allocation() const { return max_allocation_; }
  bool has_fp64() const { return has_fp64_; }
  // Throws BP_STATUS_UNIMPLEMENTED, naming `op`, for Double on a device without double precision
  // (cl_khr_fp64): a limit of the device, whatever dtypes the op takes.
  void require_double_precision_for(std::string_view op, DType dtype) const;

  // The work-group size of elementwise and group kernels (a power of two, at most 256), the
  // tile edge of matmul (TILE x TILE work-groups), and a cap on the work-groups of group
  // kernels (16 per compute unit), which loop over the groups beyond it.
  size_t work_group_size() const { return work_group_size_; }
  size_t tile() const { return tile_; }
  size_t max_work_groups() const { return 16 * compute_units_; }
  // Work-groups the device runs at once (CL_DEVICE_MAX_COMPUTE_UNITS: a CPU driver's threads).
  size_t compute_units() const { return compute_units_; }
  KernelShape kernel_shape() const { return kernel_shape_; }

  cl_context context() const { return context_.get(); }
  cl_command_queue queue() const { return queue_.get(); }
  ProgramBuilder& programs() { return programs_; }

  // The program of `source` for `dtype` (none for the Copy program), built on first use. Throws
  // BP_STATUS_UNIMPLEMENTED for Double on a device without cl_khr_fp64.
  cl_program program(KernelSource source, std::optional<DType> dtype);

  // A kernel object holds its arguments, so a launch sets them and enqueues under this lock;
  // kernel() returns the cached object of `name` in `program` and needs the lock held.
  std::mutex& launch_mutex() { return launch_mutex_; }
  cl_kernel kernel(cl_program program, const char* name);

 private:
  int index_;
  cl_device_id device_;
  std::string name_;
  std::string description_;
  std::string label_;
  uint64_t total_memory_ = 0;
  uint64_t max_allocation_ = 0;
  bool has_fp64_ = false;
  size_t work_group_size_ = 1;
  size_t tile_ = 1;
  size_t compute_units_ = 1;
  KernelShape kernel_shape_ = KernelShape::Gpu;
  std::string build_options_;  // shared by every program of this device

  // Declared in release order, last first: kernels, programs, queue, context.
  OwnedContext context_;
  OwnedQueue queue_;
  ProgramBuilder programs_;
  std::mutex launch_mutex_;
  std::map<cl_program, std::map<std::string, OwnedKernel, std::less<>>> kernels_;
};

}  // namespace bp::opencl
