#include "runtime/device.h"

#include <algorithm>
#include <bit>
#include <string_view>
#include <vector>

namespace bp::opencl {
namespace {

template <typename Object, typename Info, cl_int (*GetInfo)(Object, Info, size_t, void*, size_t*)>
std::string info_string(Object object, Info what) {
  size_t size = 0;
  check_cl(GetInfo(object, what, 0, nullptr, &size), "reading an OpenCL property");
  std::string text(size, '\0');
  check_cl(GetInfo(object, what, size, text.data(), nullptr), "reading an OpenCL property");
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string device_string(cl_device_id device, cl_device_info what) {
  return info_string<cl_device_id, cl_device_info, clGetDeviceInfo>(device, what);
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  return info_string<cl_platform_id, cl_platform_info, clGetPlatformInfo>(platform, what);
}

template <typename T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  check_cl(clGetDeviceInfo(device, what, sizeof value, &value, nullptr),
           "reading an OpenCL property");
  return value;
}

bool has_extension(const std::string& extensions, std::string_view name) {
  for (size_t at = extensions.find(name); at != std::string::npos;
       at = extensions.find(name, at + 1)) {
    const size_t end = at + name.size();
    if ((at == 0 || extensions[at - 1] == ' ') &&
        (end == extensions.size() || extensions[end] == ' ')) {
      return true;
    }
  }
  return false;
}

const char* type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

// "1.2" from "OpenCL C 1.2 PoCL".
std::string c_version(const std::string& text) {
  constexpr std::string_view prefix = "OpenCL C ";
  if (text.rfind(prefix, 0) != 0) return text;
  const std::string rest = text.substr(prefix.size());
  return rest.substr(0, rest.find(' '));
}

// What a compiled binary depends on besides its source and options.
std::string identity(cl_platform_id platform, cl_device_id device) {
  return "device: " + device_string(device, CL_DEVICE_NAME) +
         "\nvendor: " + device_string(device, CL_DEVICE_VENDOR) +
         "\ndevice version: " + device_string(device, CL_DEVICE_VERSION) +
         "\ndriver version: " + device_string(device, CL_DRIVER_VERSION) +
         "\nplatform: " + platform_string(platform, CL_PLATFORM_NAME) + " " +
         platform_string(platform, CL_PLATFORM_VERSION);
}

OwnedContext create_context(cl_device_id device, const std::string& label) {
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
  check_cl(error, "clCreateContext for " + label);
  return OwnedContext(context);
}

// Why a device without cl_khr_fp64 refuses Double tensors, and what to do.
std::string lacks_double_precision(const std::string& label) {
  return label +
         " has no double precision (cl_khr_fp64), so it cannot compute on Double "
         "tensors; convert them to Float first";
}

OwnedQueue create_queue(cl_context context, cl_device_id device, const std::string& label) {
  cl_int error = CL_SUCCESS;
  // In order; profiling gives events (markers) the device's timestamps.
  cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &error);
  check_cl(error, "clCreateCommandQueue for " + label);
  return OwnedQueue(queue);
}

}  // namespace

std::optional<KernelShape> kernel_shape_named(std::string_view name) {
  if (name == "gpu") return KernelShape::Gpu;
  if (name == "cpu") return KernelShape::Cpu;
  return std::nullopt;
}

Device::Device(int index, cl_platform_id platform, cl_device_id device, ProgramCache* cache,
               std::optional<KernelShape> shape)
    : index_(index),
      device_(device),
      name_(device_string(device, CL_DEVICE_NAME)),
      label_("opencl:" + std::to_string(index) + " (" + name_ + ")"),
      context_(create_context(device, label_)),
      queue_(create_queue(context_.get(), device, label_)),
      programs_(context_.get(), device, identity(platform, device), label_, cache) {
  const std::string extensions = device_string(device, CL_DEVICE_EXTENSIONS);
  has_fp64_ = has_extension(extensions, "cl_khr_fp64");
  const bool has_fp16 = has_extension(extensions, "cl_khr_fp16");
  const std::string c = c_version(device_string(device, CL_DEVICE_OPENCL_C_VERSION));
  const auto type = device_value<cl_device_type>(device, CL_DEVICE_TYPE);
  kernel_shape_ =
      shape.value_or((type & CL_DEVICE_TYPE_CPU) != 0 ? KernelShape::Cpu : KernelShape::Gpu);
  description_ = "platform: " + platform_string(platform, CL_PLATFORM_NAME) +
                 ", type: " + type_name(type) + ", OpenCL C " + c +
                 ", fp64: " + (has_fp64_ ? "yes" : "no") + ", fp16: " + (has_fp16 ? "yes" : "no");
  total_memory_ = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE);
  max_allocation_ = device_value<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);

  // Work-groups of up to 256 work-items, also as two dimensions (group kernels, matmul).
  std::vector<size_t> item_sizes(device_value<cl_uint>(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS));
  check_cl(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                           item_sizes.size() * sizeof(size_t), item_sizes.data(), nullptr),
           "reading an OpenCL property");
  size_t limit = std::min<size_t>(256, device_value<size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  for (size_t d = 0; d < std::min<size_t>(2, item_sizes.size()); ++d) {
    limit = std::min(limit, item_sizes[d]);
  }
  work_group_size_ = std::bit_floor(std::max<size_t>(limit, 1));
  tile_ = 16;
  while (tile_ > 1 && tile_ * tile_ > work_group_size_) tile_ /= 2;
  compute_units_ = std::max<cl_uint>(1, device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS));

  // -w: drivers such as PoCL print their compiler's warnings to stderr; errors still reach the
  // build log.
  build_options_ =
      "-w -DWG_SIZE=" + std::to_string(work_group_size_) + " -DTILE=" + std::to_string(tile_);
  if (c >= "1.2") build_options_ += " -cl-std=CL1.2";
  if (has_fp64_) build_options_ += " -DHAS_FP64";
  if (kernel_shape_ == KernelShape::Cpu) build_options_ += " -DWALK_IN_TILES";
}

Device::~Device() {
  // Kernels still running may use the programs and buffers about to go.
  clFinish(queue_.get());
}

void Device::require_double_precision_for(std::string_view op, DType dtype) const {
  if (dtype != DType::Float64 || has_fp64_) return;
  throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                      std::string(op) + ": " + lacks_double_precision(label_));
}

cl_program Device::program(KernelSource source, std::optional<DType> dtype) {
  if (dtype == DType::Float64 && !has_fp64_) {
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED, lacks_double_precision(label_));
  }
  std::string options = build_options_;
  if (dtype) options += " -DDTYPE=" + std::to_string(static_cast<int>(*dtype));
  return programs_.get(source_name(source), program_text(source), options);
}

cl_kernel Device::kernel(cl_program program, const char* name) {
  auto& by_name = kernels_[program];
  if (auto found = by_name.find(std::string_view(name)); found != by_name.end()) {
    return found->second.get();
  }
  cl_int error = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, name, &error);
  check_cl(error, std::string("clCreateKernel ") + name + " on " + label_);
  return by_name.emplace(name, OwnedKernel(kernel)).first->second.get();
}

}  // namespace bp::opencl
