// BACKPLANE_VALIDATE=1: the generated kernel wrappers (Kernels.h) call each kernel through
// validate_kernel_call, which finds kernels that leave part of an output unwritten or write a
// tensor they only read. With validation off, a wrapper pays one load and one branch.
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
#include <vector>

namespace bp::detail {

// Set while plugins load, before any kernel can be found, when BACKPLANE_VALIDATE=1.
extern constinit std::atomic<bool> g_validating;

// Turns validation on; `fatal` makes the first finding a bp::Error.
void start_validation(bool fatal);

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

// The kernel call with its arguments bound: a reference to the wrapper's lambda, which
// outlives it.
class KernelCall {
 public:
  template <typename Call>
  explicit KernelCall(const Call& call)
      : call_(&call), invoke_([](const void* c) { (*static_cast<const Call*>(c))(); }) {}
  void operator()() const { invoke_(call_); }

 private:
  const void* call_;
  void (*invoke_)(const void*);
};

// Runs `call`, the kernel of `op` on `device`, between the checks above. A kernel that fails
// throws as it would unchecked.
[[gnu::cold]] void validate_kernel_call(OpId op, Device device,
                                        std::initializer_list<ValidatedArgument> written,
                                        std::initializer_list<ValidatedArgument> read,
                                        KernelCall call);

// Every finding so far, in the order found, each once.
std::vector<std::string> validation_findings();

}  // namespace bp::detail
