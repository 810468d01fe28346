#include "dispatch/host_fallback.h"

#include <backplane/backplane.h>

#include "support/log.h"
#include "tensor/copy_contiguous.h"

#include <array>
#include <atomic>

namespace bp::detail {

HostFallback::HostFallback(OpId op, Device device) {
  static std::array<std::atomic<bool>, kOpCount> warned{};
  if (!warned[static_cast<size_t>(op)].exchange(true, std::memory_order_relaxed)) {
    log(LogLevel::Warn,
        "{} has no kernel for {}; running it on the cpu (BACKPLANE_FALLBACK=cpu), with every "
        "tensor copied there and back. Said once per op.",
        kOpNames[static_cast<size_t>(op)], device.str());
  }
}

Tensor HostFallback::input(const Tensor& t) { return t.defined() ? t.cpu() : t; }

std::optional<Tensor> HostFallback::input(const std::optional<Tensor>& t) {
  if (!t) return std::nullopt;
  return input(*t);
}

std::vector<Tensor> HostFallback::input(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> host;
  host.reserve(tensors.size());
  for (const Tensor& t : tensors) host.push_back(input(t));
  return host;
}

Tensor HostFallback::output(const Tensor& t) {
  // A kernel writes every element of its outputs and reads none: an in-place op passes the
  // tensor once more as an input, which input() copies.
  Tensor host = empty(t.sizes(), t.dtype(), Device::cpu());
  outputs_.emplace_back(t, host);
  return host;
}

void HostFallback::finish() {
  for (auto& [device_tensor, host] : outputs_) {
    // The core allocates outputs contiguous; only an out= view needs the device's copy_.
    if (device_tensor.is_contiguous()) {
      copy_contiguous(host, device_tensor);
    } else {
      device_tensor.copy_(host);
    }
  }
}

}  // namespace bp::detail
