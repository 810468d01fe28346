// plugin::storage_version: what the core tells a kernel about an input's storage (ABI 1.5), and
// nothing where the core cannot: a core that did not attach itself, a core older than 1.5 (its
// services end before storage_version), or a storage whose contents it does not track.
#include <backplane/sdk/storage_version.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <optional>

namespace {

// A fake core's answer, and the tensor it was asked about.
struct CoreAnswer {
  int32_t known = 1;
  uint64_t storage = 7;
  uint64_t version = 3;
  const DLTensor* asked = nullptr;
};

CoreAnswer answer;

int32_t answer_storage_version(void* /*context*/, const DLTensor* tensor, uint64_t* storage,
                               uint64_t* version) {
  answer.asked = tensor;
  if (answer.known != 1) return 0;
  *storage = answer.storage;
  *version = answer.version;
  return 1;
}

// Services of a core of ABI 1.5, or shortened to those of 1.3 and 1.4.
bp_core_services services(bool with_storage_version) {
  bp_core_services core{};
  core.struct_size =
      with_storage_version ? sizeof(bp_core_services) : offsetof(bp_core_services, storage_version);
  core.storage_version = &answer_storage_version;
  return core;
}

// Attaches `core` as the core attaches itself to a plugin's descriptor.
void attach(const bp_core_services* core) {
  bp_plugin plugin{};
  plugin.name = "acme";
  bp::plugin::connect_to_core(plugin);
  plugin.attach_core(core);
}

}  // namespace

TEST_CASE("a core of ABI 1.5 names the input's storage and its version") {
  const bp_core_services core = services(true);
  attach(&core);
  answer = CoreAnswer{};
  const DLTensor input{};
  const std::optional<bp::plugin::StorageVersion> found = bp::plugin::storage_version(input);
  REQUIRE(found.has_value());
  CHECK(found->storage == 7);
  CHECK(found->version == 3);
  CHECK(answer.asked == &input);
  attach(nullptr);
}

TEST_CASE("a storage the core does not track has no version") {
  const bp_core_services core = services(true);
  attach(&core);
  answer = CoreAnswer{};
  answer.known = 0;
  CHECK_FALSE(bp::plugin::storage_version(DLTensor{}).has_value());
  attach(nullptr);
}

TEST_CASE("without a core, or under one older than 1.5, nothing is known and nothing is asked") {
  answer = CoreAnswer{};
  attach(nullptr);
  CHECK_FALSE(bp::plugin::storage_version(DLTensor{}).has_value());
  const bp_core_services older = services(false);
  attach(&older);
  CHECK_FALSE(bp::plugin::storage_version(DLTensor{}).has_value());
  CHECK(answer.asked == nullptr);
  attach(nullptr);
}
