// What a plugin's devices are called in DLPack: the device type that the DLTensor views of
// their tensors carry, so that a kernel that checks DLTensor::device sees what it expects.
#pragma once

#include <backplane/abi.h>

namespace bp::detail {

// The plugin's own bp_plugin::dlpack_device_type (ABI 1.4) when it sets one; otherwise the
// core's guess, as for every plugin before 1.4. `plugin` is a descriptor accept_descriptor()
// returned.
DLDeviceType dlpack_device_type_of(const bp_plugin& plugin);

}  // namespace bp::detail
