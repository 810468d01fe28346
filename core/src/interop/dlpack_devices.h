// Which DLPack device a Backplane device is, and back: the host is kDLCPU, and each loaded
// backend's devices carry the DLPack device type its plugin declared (dispatch/dlpack_bridge.h
// keeps it per device type).
#pragma once

#include <backplane/device.h>

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace bp::detail {

// DLDevice::device_type as the number its producer wrote. A C producer, or one built against
// a newer DLPack, may write a value that DLPack 0.6's enum cannot hold, which C++ must not read
// as the enum.
int32_t dlpack_device_type_number(const DLDevice& device);

// Whether a data pointer of this DLPack device type is an address, to which a byte offset may
// be added (host, CUDA and ROCm memory), rather than a handle such as an OpenCL cl_mem, which
// DLTensor::byte_offset must carry.
bool dlpack_data_is_address(int32_t type);

// The DLPack device of `device`'s memory. A bp::Error, for the call `op`, when the backend's
// plugin declares no DLPack device type (kDLExtDev): nothing outside Backplane could use its
// pointers.
DLDevice exported_dlpack_device(Device device, std::string_view op);

// The device that `device` names: the host for kDLCPU and the pinned host memory types,
// otherwise the device of that index of the first loaded backend (in load order) whose plugin
// declared that type. A bp::Error, for the call `op`, naming the loaded backends and their
// types when none did or the index is not one of its devices.
Device imported_device(DLDevice device, std::string_view op);

// "kDLOpenCL (4)"; "42 (unknown to DLPack 0.6)" for a number DLPack 0.6 does not name.
std::string describe_dlpack_device_type(int32_t type);

}  // namespace bp::detail
