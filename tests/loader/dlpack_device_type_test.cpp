// What DLTensor::device says on a plugin's devices: the DLPack device type a plugin declares
// (ABI 1.4), or, for one that does not, what the core made of it before 1.4.
#include "fixtures.h"
#include "dispatch/dlpack_bridge.h"
#include "runtime/dlpack_device_type.h"

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <cstddef>

using bp::detail::dlpack_device_type_of;
using loader_test::fixture_path;
using loader_test::load_once;

namespace {

bp_status allocate(int32_t, uint64_t, void**) { return BP_STATUS_OK; }

// An ABI 1.3 descriptor, as accept_descriptor() returns it: nothing past attach_core.
bp_plugin descriptor_of_abi_1_3(const char* name, bool own_memory) {
  bp_plugin plugin{};
  plugin.struct_size = offsetof(bp_plugin, attach_core) + sizeof(plugin.attach_core);
  plugin.abi_major = BP_ABI_MAJOR;
  plugin.abi_minor = 3;
  plugin.name = name;
  plugin.allocate = own_memory ? allocate : nullptr;
  return plugin;
}

DLDeviceType view_device_type(const bp::Tensor& t) {
  return bp::detail::to_dlpack_view(t).device.device_type;
}

}  // namespace

TEST_CASE("a plugin before ABI 1.4 is named in DLPack by its memory and its backend name") {
  CHECK(dlpack_device_type_of(descriptor_of_abi_1_3("cuda", true)) == kDLCUDA);
  CHECK(dlpack_device_type_of(descriptor_of_abi_1_3("rocm", true)) == kDLROCM);
  CHECK(dlpack_device_type_of(descriptor_of_abi_1_3("hip", true)) == kDLROCM);
  CHECK(dlpack_device_type_of(descriptor_of_abi_1_3("opencl", true)) == kDLOpenCL);
  CHECK(dlpack_device_type_of(descriptor_of_abi_1_3("vulkan", true)) == kDLVulkan);
  CHECK(dlpack_device_type_of(descriptor_of_abi_1_3("metal", true)) == kDLMetal);
  // A name DLPack does not know.
  CHECK(dlpack_device_type_of(descriptor_of_abi_1_3("acme", true)) == kDLExtDev);
  // Without memory functions its devices use host memory, whatever the name.
  CHECK(dlpack_device_type_of(descriptor_of_abi_1_3("cuda", false)) == kDLCPU);
  CHECK(dlpack_device_type_of(descriptor_of_abi_1_3("acme", false)) == kDLCPU);
}

TEST_CASE("a plugin of ABI 1.4 is named in DLPack as it declares, or as before when it leaves 0") {
  bp_plugin plugin = descriptor_of_abi_1_3("acme", true);
  plugin.struct_size = sizeof(bp_plugin);
  plugin.abi_minor = 4;
  plugin.dlpack_device_type = kDLVPI;
  CHECK(dlpack_device_type_of(plugin) == kDLVPI);
  // Declared against the name's guess, and against host memory.
  plugin.name = "cuda";
  plugin.dlpack_device_type = kDLCPU;
  CHECK(dlpack_device_type_of(plugin) == kDLCPU);
  plugin.allocate = nullptr;
  plugin.dlpack_device_type = kDLCUDAManaged;
  CHECK(dlpack_device_type_of(plugin) == kDLCUDAManaged);
  plugin.dlpack_device_type = 0;
  CHECK(dlpack_device_type_of(plugin) == kDLCPU);
  plugin.allocate = allocate;
  CHECK(dlpack_device_type_of(plugin) == kDLCUDA);
}

TEST_CASE("the DLPack views of an ABI 1.3 plugin's tensors carry what the core made of it") {
  load_once(fixture_path("fixture_abi_1_3"));
  // Its descriptor says kDLCUDA past its struct_size, which is absent: its memory is the host's.
  const bp::Tensor t = bp::empty({2}, bp::kFloat32, bp::Device("fixture_abi_1_3"));
  CHECK(view_device_type(t) == kDLCPU);
}

TEST_CASE("the DLPack views of an ABI 1.4 plugin's tensors carry the type it declares") {
  load_once(fixture_path("fixture_device_memory"));
  // It has memory functions of its own, which the core alone would name kDLExtDev.
  const bp::Tensor t = bp::from_vector<float>({1, 2}, {2}).to(bp::Device("fixture_device_memory"));
  CHECK(view_device_type(t) == kDLCPU);
  CHECK(view_device_type(t.slice(0, 1, 2)) == kDLCPU);
}
