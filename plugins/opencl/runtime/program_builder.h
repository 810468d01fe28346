// Builds the programs of one device's context: once per (source, options) for the life of the
// context, and through the disk cache, so that a program compiled by an earlier process is
// loaded from its binary (clCreateProgramWithBinary) rather than compiled again.
#pragma once

#include "runtime/cl_call.h"
#include "runtime/program_cache.h"

#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace bp::opencl {

class ProgramBuilder {
 public:
  // `device_identity` names what a binary depends on besides its source and options (device,
  // vendor, driver and OpenCL versions); `device_label` names the device in messages. `cache`
  // may be null (no disk cache).
  ProgramBuilder(cl_context context, cl_device_id device, std::string device_identity,
                 std::string device_label, ProgramCache* cache);
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  // The program built from `text` with `options`. `name` ("elementwise.cl") names the text in
  // messages and, with the options, identifies the program in memory: give each distinct text
  // its own name. A compile error throws an Error carrying the build log.
  cl_program get(std::string_view name, const std::string& text, const std::string& options);

  // How programs were obtained so far (for tests and benchmarks).
  struct Counts {
    int compiled = 0;  // from source
    int loaded = 0;    // from a cached binary
  };
  Counts counts() const;

 private:
  std::string cache_key(std::string_view name, const std::string& text,
                        const std::string& options) const;
  cl_program load_binary(const std::string& key, const std::string& options);
  cl_program compile(std::string_view name, const std::string& text, const std::string& options);
  void store_binary(cl_program program, const std::string& key);
  std::string build_log(cl_program program) const;

  cl_context context_;
  cl_device_id device_;
  std::string device_identity_;
  std::string device_label_;
  ProgramCache* cache_;

  mutable std::mutex mutex_;  // held while building: others wanting a program wait for it
  std::map<std::string, OwnedProgram, std::less<>> programs_;  // by name + '\n' + options
  Counts counts_;
};

}  // namespace bp::opencl
