// What the loader accepts from a plugin's entry point, checked on descriptors built here.
#include "runtime/kernel_review.h"
#include "runtime/plugin_descriptor.h"
#include "runtime/plugin_rejected.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstddef>
#include <string>

using bp::detail::accept_descriptor;
using bp::detail::OpId;
using bp::detail::PluginRejected;

namespace {

bp_status one_device(int32_t* count) {
  *count = 1;
  return BP_STATUS_OK;
}
bp_status describe(int32_t, bp_device_properties*) { return BP_STATUS_OK; }
const char* no_error() { return ""; }
bp_status allocate(int32_t, uint64_t, void**) { return BP_STATUS_OK; }
bp_status create_event(int32_t, bp_event*) { return BP_STATUS_OK; }
bp_status record_event(int32_t, bp_event) { return BP_STATUS_OK; }
bp_status a_kernel() { return BP_STATUS_OK; }
bp_status another_kernel() { return BP_STATUS_OK; }

bp_plugin valid_descriptor() {
  bp_plugin plugin{};
  plugin.struct_size = sizeof(bp_plugin);
  plugin.abi_major = BP_ABI_MAJOR;
  plugin.abi_minor = BP_ABI_MINOR;
  plugin.name = "test";
  plugin.version = "1.0";
  plugin.last_error = no_error;
  plugin.device_count = one_device;
  plugin.device_properties = describe;
  return plugin;
}

std::string rejection(const bp_plugin* plugin) {
  try {
    accept_descriptor(plugin);
  } catch (const PluginRejected& rejected) {
    return rejected.what();
  }
  FAIL("the descriptor was accepted");
  return {};
}

bp_kernel kernel_for(OpId op, bp_kernel_fn fn) {
  const auto index = static_cast<size_t>(op);
  return {sizeof(bp_kernel), bp::detail::kOpNames[index].data(), bp::detail::kOpSchemaHashes[index],
          fn};
}

}  // namespace

TEST_CASE("a complete descriptor is accepted as it is") {
  const bp_plugin plugin = valid_descriptor();
  const bp_plugin accepted = accept_descriptor(&plugin);
  CHECK(std::string(accepted.name) == "test");
  CHECK((accepted.device_count == plugin.device_count));
  CHECK((accepted.allocate == nullptr));
}

TEST_CASE("fields past the struct_size of an older minor version read as absent") {
  bp_plugin plugin = valid_descriptor();
  const bp_kernel kernels[] = {kernel_for(OpId::add_out, a_kernel)};
  plugin.kernels = kernels;
  plugin.kernel_count = 1;
  plugin.read_counters = [](bp_counter*, int64_t, int64_t*) { return BP_STATUS_OK; };
  plugin.abi_minor = 0;
  plugin.struct_size = offsetof(bp_plugin, read_counters);  // ABI 1.0's descriptor

  const bp_plugin accepted = accept_descriptor(&plugin);
  CHECK((accepted.device_properties == plugin.device_properties));
  CHECK(accepted.kernel_count == 1);
  CHECK((accepted.read_counters == nullptr));
}

TEST_CASE("a descriptor shorter than its own minor version's, or of a ragged size, is refused") {
  bp_plugin plugin = valid_descriptor();
  plugin.abi_minor = 1;
  plugin.struct_size = offsetof(bp_plugin, read_counters);
  CHECK(rejection(&plugin).find(fmt::format("its descriptor is {} bytes, but it claims ABI {}.1",
                                            plugin.struct_size, BP_ABI_MAJOR)) == 0);
  plugin.abi_minor = BP_ABI_MINOR;
  plugin.struct_size = sizeof(bp_plugin) + 1;
  CHECK(rejection(&plugin).find(fmt::format("its descriptor is {} bytes", plugin.struct_size)) ==
        0);
  // A newer minor version's descriptor is longer, and loads.
  plugin.abi_minor = BP_ABI_MINOR + 1;
  plugin.struct_size = sizeof(bp_plugin) + sizeof(void*);
  CHECK(std::string(accept_descriptor(&plugin).name) == "test");
}

TEST_CASE("a NULL descriptor says the entry point refused the core") {
  CHECK(rejection(nullptr) ==
        fmt::format("its backplane_plugin_entry returned no descriptor (NULL): it refused this "
                    "core (ABI {}.{}) or could not start; its own output may say why",
                    BP_ABI_MAJOR, BP_ABI_MINOR));
}

TEST_CASE("a descriptor too small for the fields every plugin fills is refused") {
  bp_plugin plugin = valid_descriptor();
  plugin.struct_size = offsetof(bp_plugin, device_count);
  const std::string reason = rejection(&plugin);
  CHECK(reason.find(fmt::format("its descriptor is {} bytes", plugin.struct_size)) == 0);
  CHECK(reason.find("rebuild the plugin against this SDK") != std::string::npos);
}

TEST_CASE("another ABI major version is refused with both versions named") {
  bp_plugin plugin = valid_descriptor();
  plugin.abi_major = BP_ABI_MAJOR + 1;
  CHECK(rejection(&plugin) ==
        fmt::format("it was built for ABI {}.x, this core speaks {}.x: rebuild the plugin "
                    "against this SDK",
                    BP_ABI_MAJOR + 1, BP_ABI_MAJOR));
}

TEST_CASE("a newer ABI minor version is accepted") {
  bp_plugin plugin = valid_descriptor();
  plugin.abi_minor = BP_ABI_MINOR + 1;
  CHECK(accept_descriptor(&plugin).abi_minor == BP_ABI_MINOR + 1);
}

TEST_CASE("a backend name must be lower-case letters, digits and '_'") {
  bp_plugin plugin = valid_descriptor();
  plugin.name = "My GPU";
  CHECK(rejection(&plugin).find("its backend name 'My GPU' is not valid") == 0);
  plugin.name = nullptr;
  CHECK(rejection(&plugin).find("its backend name (NULL) is not valid") == 0);
}

TEST_CASE("a descriptor without device_count is refused") {
  bp_plugin plugin = valid_descriptor();
  plugin.device_count = nullptr;
  CHECK(rejection(&plugin) ==
        "its descriptor has no device_count function, which every plugin must provide");
}

TEST_CASE("memory functions come all together or not at all") {
  bp_plugin plugin = valid_descriptor();
  plugin.allocate = allocate;
  const std::string reason = rejection(&plugin);
  CHECK(reason.find("it sets some memory functions but not deallocate, copy_host_to_device, "
                    "copy_device_to_host, copy_device_to_device") == 0);
}

TEST_CASE("event functions come all together or not at all") {
  bp_plugin plugin = valid_descriptor();
  plugin.event_create = create_event;
  plugin.event_record = record_event;
  CHECK(rejection(&plugin) ==
        "it sets some event functions but not event_destroy, event_query, event_synchronize, "
        "event_elapsed: a plugin with events (ABI 1.2) sets all six; one whose calls finish "
        "their work before returning sets none");
}

TEST_CASE("a descriptor of ABI 1.1 has no events, whatever lies past its end") {
  bp_plugin plugin = valid_descriptor();
  plugin.struct_size = offsetof(bp_plugin, event_create);
  plugin.abi_minor = 1;
  plugin.event_create = create_event;  // past struct_size: must not be read
  const bp_plugin accepted = accept_descriptor(&plugin);
  CHECK((accepted.event_create == nullptr));
  CHECK((accepted.event_elapsed == nullptr));
}

TEST_CASE("a descriptor of ABI 1.3 has no DLPack device type, whatever lies past its end") {
  bp_plugin plugin = valid_descriptor();
  plugin.struct_size = offsetof(bp_plugin, attach_core) + sizeof(plugin.attach_core);
  plugin.abi_minor = 3;
  plugin.dlpack_device_type = kDLCUDA;  // past struct_size: must not be read
  CHECK(accept_descriptor(&plugin).dlpack_device_type == 0);
  plugin.struct_size = sizeof(bp_plugin);
  plugin.abi_minor = 4;
  CHECK(accept_descriptor(&plugin).dlpack_device_type == kDLCUDA);
}

bp_status make_id(void*) { return BP_STATUS_OK; }
bp_status create_communicator(int32_t, int32_t, int32_t, const void*, bp_communicator*) {
  return BP_STATUS_OK;
}
void destroy_communicator(bp_communicator) {}
bp_status all_reduce(bp_communicator, DLTensor*, bp_reduction) { return BP_STATUS_OK; }
bp_status broadcast(bp_communicator, DLTensor*, int32_t) { return BP_STATUS_OK; }
bp_status all_gather(bp_communicator, const DLTensor*, DLTensor*) { return BP_STATUS_OK; }
bp_status reduce_scatter(bp_communicator, const DLTensor*, DLTensor*, bp_reduction) {
  return BP_STATUS_OK;
}

bp_collectives complete_collectives() {
  bp_collectives table{};
  table.struct_size = sizeof(bp_collectives);
  table.communicator_id_size = 128;
  table.make_communicator_id = make_id;
  table.communicator_create = create_communicator;
  table.communicator_destroy = destroy_communicator;
  table.all_reduce = all_reduce;
  table.broadcast = broadcast;
  table.all_gather = all_gather;
  table.reduce_scatter = reduce_scatter;
  return table;
}

TEST_CASE("a descriptor of ABI 1.5 has no collectives, whatever lies past its end") {
  const bp_collectives table = complete_collectives();
  bp_plugin plugin = valid_descriptor();
  plugin.struct_size = offsetof(bp_plugin, collectives);
  plugin.abi_minor = 5;
  plugin.collectives = &table;  // past struct_size: must not be read
  CHECK((accept_descriptor(&plugin).collectives == nullptr));
  plugin.struct_size = sizeof(bp_plugin);
  plugin.abi_minor = 6;
  CHECK((accept_descriptor(&plugin).collectives == &table));
}

TEST_CASE("a collectives table is refused unless whole, with an identifier size to pass on") {
  bp_plugin plugin = valid_descriptor();
  bp_collectives table = complete_collectives();
  plugin.collectives = &table;
  table.broadcast = nullptr;
  CHECK(rejection(&plugin) ==
        "its collectives table has no broadcast function: a plugin with collectives sets all "
        "seven, or leaves `collectives` NULL");
  table = complete_collectives();
  table.communicator_id_size = BP_MAX_COMMUNICATOR_ID_BYTES + 1;
  CHECK(rejection(&plugin) ==
        fmt::format("its communicator identifiers are {} bytes; they must be 1 to {} "
                    "(BP_MAX_COMMUNICATOR_ID_BYTES)",
                    BP_MAX_COMMUNICATOR_ID_BYTES + 1, BP_MAX_COMMUNICATOR_ID_BYTES));
  table = complete_collectives();
  table.struct_size = sizeof(size_t);
  CHECK(rejection(&plugin) ==
        fmt::format("its collectives table is {} bytes, smaller than the {} bytes of ABI 1.6's: "
                    "it is corrupt; rebuild the plugin against this SDK",
                    sizeof(size_t), sizeof(bp_collectives)));
}

TEST_CASE("a negative DLPack device type is refused with what to declare instead") {
  bp_plugin plugin = valid_descriptor();
  plugin.dlpack_device_type = -2;
  CHECK(rejection(&plugin) ==
        "its dlpack_device_type is -2, which no DLPack device type is: set the DLDeviceType of "
        "dlpack.h that says what its device pointers are (kDLCUDA, kDLOpenCL, kDLCPU for host "
        "addresses, kDLExtDev for others), or 0 to leave it to the core");
}

TEST_CASE("kernels install in ops.yaml order whatever the plugin's order") {
  bp_plugin plugin = valid_descriptor();
  const bp_kernel kernels[] = {kernel_for(OpId::mul_out, another_kernel),
                               kernel_for(OpId::add_out, a_kernel)};
  plugin.kernels = kernels;
  plugin.kernel_count = 2;
  const auto review = bp::detail::review_kernels(accept_descriptor(&plugin));
  REQUIRE(review.accepted.size() == 2);
  CHECK(review.accepted[0].op == OpId::add_out);
  CHECK((review.accepted[0].fn == a_kernel));
  CHECK(review.accepted[1].op == OpId::mul_out);
  CHECK(review.refused.empty());
}

TEST_CASE("a kernel with another schema hash is refused alone with both hashes named") {
  bp_plugin plugin = valid_descriptor();
  bp_kernel stale = kernel_for(OpId::mul_out, another_kernel);
  stale.schema_hash = 0x1234;
  const bp_kernel kernels[] = {kernel_for(OpId::add_out, a_kernel), stale};
  plugin.kernels = kernels;
  plugin.kernel_count = 2;
  const auto review = bp::detail::review_kernels(accept_descriptor(&plugin));
  REQUIRE(review.accepted.size() == 1);
  CHECK(review.accepted[0].op == OpId::add_out);
  REQUIRE(review.refused.size() == 1);
  CHECK(review.refused[0].op == "mul.out");
  const auto mul = static_cast<size_t>(OpId::mul_out);
  CHECK(review.refused[0].reason ==
        fmt::format("its schema hash 0x0000000000001234 differs from the core's {:#018x} for "
                    "'{}': rebuild the plugin against this SDK",
                    bp::detail::kOpSchemaHashes[mul], bp::detail::kOpSchemas[mul]));
}

TEST_CASE("a kernel for an op the core does not know is refused alone") {
  bp_plugin plugin = valid_descriptor();
  const bp_kernel kernels[] = {{sizeof(bp_kernel), "frobnicate.out", 1, a_kernel},
                               kernel_for(OpId::add_out, a_kernel)};
  plugin.kernels = kernels;
  plugin.kernel_count = 2;
  const auto review = bp::detail::review_kernels(accept_descriptor(&plugin));
  CHECK(review.accepted.size() == 1);
  REQUIRE(review.refused.size() == 1);
  CHECK(review.refused[0].op == "frobnicate.out");
  CHECK(review.refused[0].reason ==
        "this core's ops.yaml has no kernel op 'frobnicate.out': rebuild the plugin against "
        "this SDK");
}

TEST_CASE("an op listed twice keeps its first kernel") {
  bp_plugin plugin = valid_descriptor();
  const bp_kernel kernels[] = {kernel_for(OpId::add_out, a_kernel),
                               kernel_for(OpId::add_out, another_kernel)};
  plugin.kernels = kernels;
  plugin.kernel_count = 2;
  const auto review = bp::detail::review_kernels(accept_descriptor(&plugin));
  REQUIRE(review.accepted.size() == 1);
  CHECK((review.accepted[0].fn == a_kernel));
  REQUIRE(review.refused.size() == 1);
  CHECK(review.refused[0].reason == "the plugin lists this op twice; the first entry is used");
}

TEST_CASE("kernel entries longer than this core's are read with the plugin's stride") {
  // A plugin of a newer minor version, whose bp_kernel has grown a field.
  struct NewerKernel {
    bp_kernel known;
    uint64_t added_later;
  };
  NewerKernel kernels[] = {{kernel_for(OpId::add_out, a_kernel), 7},
                           {kernel_for(OpId::mul_out, another_kernel), 7}};
  for (NewerKernel& kernel : kernels) kernel.known.struct_size = sizeof(NewerKernel);
  bp_plugin plugin = valid_descriptor();
  plugin.kernels = &kernels[0].known;
  plugin.kernel_count = 2;
  const auto review = bp::detail::review_kernels(accept_descriptor(&plugin));
  REQUIRE(review.accepted.size() == 2);
  CHECK(review.accepted[1].op == OpId::mul_out);
  CHECK((review.accepted[1].fn == another_kernel));
}
