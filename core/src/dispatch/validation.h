// BACKPLANE_VALIDATE=1: the generated kernel wrappers (Kernels.h) call each kernel through
// validate_kernel_call, which finds kernels that leave part of an output unwritten, write a
// tensor they only read, or write past the end of an output's storage. BACKPLANE_VALIDATE=compare
// also runs the op on host copies of its inputs and compares the results. With validation off,
// a wrapper pays one load and one branch.
//
// Before the call, every element of every written tensor is set to a poison value, and the bytes
// every read tensor spans are checksummed (on the host; device memory is copied there). After
// it, an output element that still holds the poison was never written, and an input whose
// checksum changed was written. A kernel may compute the poison itself (an integer output can
// hold any bit pattern, and a NaN may come from an input), so an output with poisoned elements
// is checked again: the kernel runs once more over outputs poisoned with a second value, and
// only elements that held each run's poison are reported. Rerunning is not possible when an
// output is also an input (in place): such an output is not poisoned at all, and the other
// outputs' candidates are reported only for floating and bool dtypes, whose poisons (NaNs of a
// particular payload, a byte that is neither 0 nor 1) no arithmetic produces from ordinary
// values.
//
// Memory of backends with memory of their own carries a guard zone past each storage's end
// (memory/caching_allocator.h); after the call, the zone of every written tensor's storage is
// read back, and a changed byte means the kernel wrote past the end.
//
// With compare, on a device other than the host, the op also runs on host copies of its inputs
// through the host's kernel (before the device's, which may write its inputs in place), and
// every output is compared, element by element, with the host's within the op's conformance
// tolerance (<backplane/sdk/tolerance.hpp). Ops the host has no kernel for are not compared.
//
// Each finding names the op, the device, the argument and what happened. It is logged once per
// op, device type, argument and kind, and kept for bp::runtime_info().validation_findings; with
// BACKPLANE_VALIDATE_FATAL=1 it is thrown instead, as a bp::Error.
#pragma once

#include <backplane/device.h>
#include <backplane/tensor.h>
#include <core_generated/OpTable.h>

#include <atomic>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bp::detail {

// Set while plugins load, before any kernel can be found or device memory allocated, when
// BACKPLANE_VALIDATE is 1 or compare.
extern constinit std::atomic<bool> g_validating;

// Turns validation on; `compare` adds the comparison with the host, `fatal` makes the first
// finding a bp::Error.
void start_validation(bool compare, bool fatal);

// A Tensor, Tensor? or Tensor[] argument of a kernel op, with its name in the schema.
class ValidatedArgument {
 public:
  ValidatedArgument(const char* name, const Tensor& tensor) : name_(name), tensor_(&tensor) {}
  ValidatedArgument(const char* name, const std::optional<Tensor>& tensor)
      : name_(name), tensor_(tensor ? &*tensor : nullptr) {}
  ValidatedArgument(const char* name, const std::vector<Tensor>& tensors)
      : name_(name), list_(&tensors) {}

  const char* name() const { return name_; }
  const Tensor* tensor() const { return tensor_; }           // nullptr for a list or nullopt
  const std::vector<Tensor>* list() const { return list_; }  // nullptr unless a list

 private:
  const char* name_;
  const Tensor* tensor_ = nullptr;
  const std::vector<Tensor>* list_ = nullptr;
};

// The host copies that BACKPLANE_VALIDATE=compare runs an op on: the generated
// <op>_on_host(..., HostReference&) passes each tensor argument through input() or output().
class HostReference {
 public:
  // A host copy of a tensor the kernel reads, with its sizes and strides, made with the backend's
  // copy functions: no kernel runs. Host tensors are passed as they are.
  static Tensor input(const Tensor& t);
  static std::optional<Tensor> input(const std::optional<Tensor>& t);
  static std::vector<Tensor> input(const std::vector<Tensor>& tensors);

  // A fresh host tensor of the shape and dtype of `t`, which the kernel writes.
  Tensor output(const Tensor& t);

  // Each output as the wrapper passed it, with its host result.
  const std::vector<std::pair<const Tensor*, Tensor>>& outputs() const { return outputs_; }

 private:
  std::vector<std::pair<const Tensor*, Tensor>> outputs_;
};

// A call with its arguments bound: a reference to the wrapper's lambda, which outlives it.
template <typename... Args>
class CallRef {
 public:
  template <typename Call>
  explicit CallRef(const Call& call)
      : call_(&call),
        invoke_([](const void* c, Args... args) { (*static_cast<const Call*>(c))(args...); }) {}
  void operator()(Args... args) const { invoke_(call_, args...); }

 private:
  const void* call_;
  void (*invoke_)(const void*, Args...);
};

// The kernel's call.
using KernelCall = CallRef<>;
// The op's call on host copies of its arguments.
using HostCall = CallRef<HostReference&>;

// Runs `call`, the kernel of `op` on `device`, between the checks above; with compare, runs
// `on_host` too. A kernel that fails throws as it would unchecked.
[[gnu::cold]] void validate_kernel_call(OpId op, Device device,
                                        std::initializer_list<ValidatedArgument> written,
                                        std::initializer_list<ValidatedArgument> read,
                                        KernelCall call, HostCall on_host);

// Every finding so far, in the order found, each once.
std::vector<std::string> validation_findings();

}  // namespace bp::detail
