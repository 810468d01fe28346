// Acme's device: one device whose "device memory" is ordinary host memory, reached only
// through the descriptor's allocate and copy functions, as a real accelerator's would be.
#include "AcmeNativeFunctions.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace acme {
namespace {

bp_status check_device(int32_t device) {
  if (device == 0) return BP_STATUS_OK;
  return bp::plugin::fail(BP_STATUS_INVALID_ARGUMENT, "acme has one device (acme:0); device " +
                                                          std::to_string(device) +
                                                          " does not exist");
}

bp_status device_count(int32_t* count) {
  *count = 1;
  return BP_STATUS_OK;
}

bp_status device_properties(int32_t device, bp_device_properties* props) {
  if (bp_status s = check_device(device)) return s;
  bp::plugin::write_device_properties(props, "Acme Simulated Accelerator",
                                      "host memory behind the device API", 0);
  return BP_STATUS_OK;
}

bp_status allocate(int32_t device, uint64_t bytes, void** ptr) {
  if (bp_status s = check_device(device)) return s;
  *ptr = std::malloc(bytes == 0 ? 1 : bytes);
  if (*ptr == nullptr) {
    return bp::plugin::fail(BP_STATUS_OUT_OF_MEMORY,
                            "acme:0 could not allocate " + std::to_string(bytes) + " bytes");
  }
  return BP_STATUS_OK;
}

bp_status deallocate(int32_t device, void* ptr) {
  if (bp_status s = check_device(device)) return s;
  std::free(ptr);
  return BP_STATUS_OK;
}

bp_status copy_host_to_device(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                              uint64_t bytes) {
  if (bp_status s = check_device(device)) return s;
  std::memcpy(static_cast<char*>(dst) + dst_offset, src, bytes);
  return BP_STATUS_OK;
}

bp_status copy_device_to_host(int32_t device, void* dst, const void* src, uint64_t src_offset,
                              uint64_t bytes) {
  if (bp_status s = check_device(device)) return s;
  std::memcpy(dst, static_cast<const char*>(src) + src_offset, bytes);
  return BP_STATUS_OK;
}

bp_status copy_device_to_device(int32_t device, void* dst, uint64_t dst_offset, const void* src,
                                uint64_t src_offset, uint64_t bytes) {
  if (bp_status s = check_device(device)) return s;
  std::memmove(static_cast<char*>(dst) + dst_offset, static_cast<const char*>(src) + src_offset,
               bytes);
  return BP_STATUS_OK;
}

bp_status synchronize(int32_t device) { return check_device(device); }

}  // namespace

void configure_plugin(bp_plugin& plugin) {
  plugin.device_count = &device_count;
  plugin.device_properties = &device_properties;
  plugin.allocate = &allocate;
  plugin.deallocate = &deallocate;
  plugin.copy_host_to_device = &copy_host_to_device;
  plugin.copy_device_to_host = &copy_device_to_host;
  plugin.copy_device_to_device = &copy_device_to_device;
  plugin.synchronize = &synchronize;
  plugin.dlpack_device_type = kDLCPU;  // its "device memory" is host memory
}

}  // namespace acme
