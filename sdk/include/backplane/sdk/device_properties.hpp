// Filling in the core's bp_device_properties: a core built against an older minor version
// passes a shorter struct, so a field is written only when it lies within `struct_size`.
#pragma once

#include <backplane/abi.h>

#include <cstddef>
#include <cstdint>

namespace bp::plugin {

// `name` and `description` must stay valid until the plugin is unloaded.
inline void write_device_properties(bp_device_properties* props, const char* name,
                                    const char* description, uint64_t total_memory) {
  const auto fits = [props](size_t offset, size_t size) {
    return offset + size <= props->struct_size;
  };
  if (fits(offsetof(bp_device_properties, name), sizeof props->name)) props->name = name;
  if (fits(offsetof(bp_device_properties, description), sizeof props->description)) {
    props->description = description;
  }
  if (fits(offsetof(bp_device_properties, total_memory), sizeof props->total_memory)) {
    props->total_memory = total_memory;
  }
}

}  // namespace bp::plugin
