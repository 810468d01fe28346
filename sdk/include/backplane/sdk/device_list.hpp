// The devices a plugin found when it started, numbered from 0 as its device_count reports them,
// why there are none when there are none, and whether the plugin has shut down. Every descriptor
// function that takes a device index reaches the device through at(), so a wrong index and a
// call after shutdown fail the same way in every plugin, with a message naming the backend.
// report_properties needs a Device with name(), description() (std::string) and
// total_memory() (bytes); the rest only stores the devices.
#pragma once

#include <backplane/abi.h>
#include <backplane/sdk/device_properties.hpp>
#include <backplane/sdk/status.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bp::plugin {

template <class Device>
class DeviceList {
 public:
  // `backend` is the plugin's backend name ("cuda"), for messages.
  explicit DeviceList(std::string backend) : backend_(std::move(backend)) {}
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;

  // Appends the next device: the first added is <backend>:0.
  void add(std::unique_ptr<Device> device) { devices_.push_back(std::move(device)); }

  // Leaves the plugin without devices. `reason` says why, and what the user can do about it;
  // device_count reports it, and bp-info shows it.
  void set_none(std::string reason) {
    devices_.clear();
    no_devices_reason_ = std::move(reason);
  }

  int count() const { return static_cast<int>(devices_.size()); }
  const std::string& no_devices_reason() const { return no_devices_reason_; }

  // The descriptor's device_count, inside plugin::guard: writes the count, and throws
  // BP_STATUS_DEVICE_ERROR with the reason when there is no device.
  void report_count(int32_t* count) const {
    *count = this->count();
    if (*count == 0) throw Error(BP_STATUS_DEVICE_ERROR, no_devices_reason_);
  }

  // The descriptor's device_properties, inside plugin::guard: device `index`'s name,
  // description and memory, which stay valid while the plugin is loaded.
  void report_properties(int index, bp_device_properties* props) const {
    const Device& device = at(index);
    write_device_properties(props, device.name().c_str(), device.description().c_str(),
                            device.total_memory());
  }

  // Device `index`; throws BP_STATUS_INVALID_ARGUMENT for an index the plugin does not have and
  // BP_STATUS_DEVICE_ERROR after shutdown.
  Device& at(int index) const {
    if (shut_down_.load(std::memory_order_acquire)) {
      throw Error(BP_STATUS_DEVICE_ERROR, "the " + backend_ + " plugin has shut down");
    }
    if (index < 0 || index >= count()) {
      throw Error(BP_STATUS_INVALID_ARGUMENT, backend_ + " has " + std::to_string(count()) +
                                                  " device(s); " + backend_ + ":" +
                                                  std::to_string(index) + " does not exist");
    }
    return *devices_[static_cast<size_t>(index)];
  }

  // The plugin's shutdown: the first call marks the list shut down, so that at() refuses from
  // then on, and hands the devices to `release`, which releases what they hold (and may destroy
  // them). Later calls do nothing.
  template <class Release>
  void shut_down(Release&& release) {
    if (shut_down_.exchange(true, std::memory_order_acq_rel)) return;
    std::forward<Release>(release)(devices_);
  }

 private:
  std::string backend_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::string no_devices_reason_;
  std::atomic<bool> shut_down_{false};
};

}  // namespace bp::plugin
