#include "runtime/program_builder.h"

#include <cstdio>
#include <utility>
#include <vector>

namespace bp::opencl {

ProgramBuilder::ProgramBuilder(cl_context context, cl_device_id device, std::string device_identity,
                               std::string device_label, ProgramCache* cache)
    : context_(context),
      device_(device),
      device_identity_(std::move(device_identity)),
      device_label_(std::move(device_label)),
      cache_(cache) {}

ProgramBuilder::Counts ProgramBuilder::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

cl_program ProgramBuilder::get(std::string_view name, const std::string& text,
                               const std::string& options) {
  std::string id = std::string(name) + '\n' + options;
  std::lock_guard lock(mutex_);
  if (auto found = programs_.find(id); found != programs_.end()) return found->second.get();

  const std::string key = cache_key(name, text, options);
  cl_program program = load_binary(key, options);
  if (program != nullptr) {
    ++counts_.loaded;
  } else {
    program = compile(name, text, options);
    ++counts_.compiled;
    store_binary(program, key);
  }
  programs_.emplace(std::move(id), OwnedProgram(program));
  return program;
}

// Everything the binary depends on, so that a new driver, other options or an edited kernel
// miss the cache instead of loading a stale binary. The source is named by its hash and length.
std::string ProgramBuilder::cache_key(std::string_view name, const std::string& text,
                                      const std::string& options) const {
  char source_hash[17];
  std::snprintf(source_hash, sizeof source_hash, "%016llx",
                static_cast<unsigned long long>(fnv1a_64(text)));
  return "backplane opencl program\n" + device_identity_ + "\noptions: " + options +
         "\nsource: " + std::string(name) + " " + source_hash + " " + std::to_string(text.size()) +
         "\n";
}

cl_program ProgramBuilder::load_binary(const std::string& key, const std::string& options) {
  if (cache_ == nullptr) return nullptr;
  const std::optional<std::vector<unsigned char>> binary = cache_->load(key);
  if (!binary) return nullptr;
  const size_t size = binary->size();
  const unsigned char* data = binary->data();
  cl_int binary_status = CL_SUCCESS;
  cl_int error = CL_SUCCESS;
  cl_program program =
      clCreateProgramWithBinary(context_, 1, &device_, &size, &data, &binary_status, &error);
  if (error == CL_SUCCESS && binary_status == CL_SUCCESS) {
    error = clBuildProgram(program, 1, &device_, options.c_str(), nullptr, nullptr);
    if (error == CL_SUCCESS) return program;
  }
  // The driver refused the binary (say, an update that kept its version string): compile.
  if (program != nullptr) clReleaseProgram(program);
  cache_->remove(key);
  return nullptr;
}

cl_program ProgramBuilder::compile(std::string_view name, const std::string& text,
                                   const std::string& options) {
  const char* source = text.c_str();
  const size_t length = text.size();
  cl_int error = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context_, 1, &source, &length, &error);
  check_cl(error, "clCreateProgramWithSource for " + std::string(name));
  error = clBuildProgram(program, 1, &device_, options.c_str(), nullptr, nullptr);
  if (error != CL_SUCCESS) {
    const std::string log = build_log(program);
    clReleaseProgram(program);
    throw plugin::Error(BP_STATUS_DEVICE_ERROR,
                        "compiling " + std::string(name) + " for " + device_label_ +
                            " with options '" + options + "' failed (" + cl_error_text(error) +
                            "); build log:\n" + (log.empty() ? "(empty)" : log));
  }
  return program;
}

void ProgramBuilder::store_binary(cl_program program, const std::string& key) {
  if (cache_ == nullptr || !cache_->enabled()) return;
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) !=
          CL_SUCCESS ||
      size == 0) {
    return;  // a driver without binaries: nothing to keep
  }
  std::vector<unsigned char> binary(size);
  unsigned char* data = binary.data();
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr) != CL_SUCCESS) {
    return;
  }
  cache_->store(key, binary);
}

std::string ProgramBuilder::build_log(cl_program program) const {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0) {
    return {};
  }
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) !=
      CL_SUCCESS) {
    return {};
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace bp::opencl
