// BACKPLANE_FALLBACK=cpu: a kernel op that the tensors' backend lacks runs on the host. The
// generated kernel wrapper (Kernels.h) calls itself again with host copies from input() and
// output(), then finish() writes the host outputs back into the device's. Slow by design (every
// tensor crosses twice), and announced once per op on stderr.
#pragma once

#include <backplane/device.h>
#include <backplane/tensor.h>
#include <core_generated/OpTable.h>

#include <optional>
#include <utility>
#include <vector>

namespace bp::detail {

class HostFallback {
 public:
  // Warns, once per op in the process, that `op` runs on the host instead of `device`.
  HostFallback(OpId op, Device device);

  // Host copies of what the kernel reads.
  static Tensor input(const Tensor& t);
  static std::optional<Tensor> input(const std::optional<Tensor>& t);
  static std::vector<Tensor> input(const std::vector<Tensor>& tensors);

  // A host tensor of the shape and dtype of one the kernel writes; finish() copies it back.
  Tensor output(const Tensor& t);

  // Every output's host values into the device tensor it came from.
  void finish();

 private:
  std::vector<std::pair<Tensor, Tensor>> outputs_;  // (device tensor, host copy)
};

}  // namespace bp::detail
