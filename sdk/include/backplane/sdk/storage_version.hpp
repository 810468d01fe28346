// Which storage a kernel's tensor input views and how often Backplane has written into it
// (ABI 1.5), for caches of what a plugin computes from the contents: a cached value is current
// while both numbers match those it was computed for.
#pragma once

#include <backplane/abi.h>
#include <backplane/sdk/log.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace bp::plugin {

struct StorageVersion {
  uint64_t storage = 0;  // names one storage for the process's life
  uint64_t version = 0;  // grows with every write into it through Backplane
  bool operator==(const StorageVersion&) const = default;
};

// `input` must be a tensor input of the kernel running on this thread (see
// bp_core_services::storage_version). Nothing where the contents may change without Backplane
// knowing, or where the core is older than 1.5: then nothing computed from them may be kept.
inline std::optional<StorageVersion> storage_version(const DLTensor& input) noexcept {
  const bp_core_services* core = core_detail::core_link().services.load(std::memory_order_acquire);
  if (core == nullptr ||
      offsetof(bp_core_services, storage_version) + sizeof(core->storage_version) >
          core->struct_size ||
      core->storage_version == nullptr) {
    return std::nullopt;
  }
  StorageVersion result;
  if (core->storage_version(core->context, &input, &result.storage, &result.version) != 1) {
    return std::nullopt;
  }
  return result;
}

}  // namespace bp::plugin
