// A backend's collectives on its own memory (the plugin ABI's bp_collectives, 1.6), which
// bp::distributed runs instead of copying device tensors through host memory
// (docs/distributed.md). Failures are bp::Error carrying the plugin's message.
#pragma once

#include <backplane/device.h>
#include <backplane/tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bp {

namespace detail {
class Backend;
}

// How the processes' elements combine; a mean is a sum divided afterwards.
enum class Reduction { Sum, Max, Min };

// One device's share of a group of processes. Each collective is collective over the group's
// processes, which call them in the same order; it returns once it completed here, its results
// written (and the outputs' version counters moved). Every tensor is contiguous on device(), of
// the same dtype and shape on every process.
class DeviceCommunicator {
 public:
  ~DeviceCommunicator();
  DeviceCommunicator(const DeviceCommunicator&) = delete;
  DeviceCommunicator& operator=(const DeviceCommunicator&) = delete;

  Device device() const { return device_; }
  void all_reduce(Tensor& tensor, Reduction reduction);
  void broadcast(Tensor& tensor, int root);
  // `output` has size times input's elements: every process's input, in rank order.
  void all_gather(const Tensor& input, Tensor& output);
  // `input` has size times output's elements; process r gets the reduction of the parts r.
  void reduce_scatter(const Tensor& input, Tensor& output, Reduction reduction);

 private:
  friend class DeviceCollectives;
  DeviceCommunicator(const detail::Backend& backend, Device device, void* communicator)
      : backend_(&backend), device_(device), communicator_(communicator) {}
  void check(const Tensor& tensor, std::string_view collective, std::string_view what) const;

  const detail::Backend* backend_;
  Device device_;
  void* communicator_;  // the plugin's bp_communicator
};

class DeviceCollectives {
 public:
  // The collectives of `device`'s backend; nothing for the host and for a backend without them.
  static std::optional<DeviceCollectives> of(Device device);

  // The backend's name ("cuda").
  const std::string& backend() const;
  // Whether all_reduce and reduce_scatter take `dtype` (broadcast and all_gather take all).
  bool reduces(DType dtype) const;
  // An identifier for a new group, made by one process and handed to the others.
  std::vector<uint8_t> make_communicator_id() const;
  // This process's communicator for `device`, as rank `rank` of `size`: collective over them
  // all, which pass the same `id`.
  std::unique_ptr<DeviceCommunicator> create_communicator(Device device, int rank, int size,
                                                          const std::vector<uint8_t>& id) const;

 private:
  explicit DeviceCollectives(const detail::Backend& backend) : backend_(&backend) {}
  const detail::Backend* backend_;
};

}  // namespace bp
