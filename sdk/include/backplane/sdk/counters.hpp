// Answering bp_plugin::read_counters (ABI 1.1) from a list of names and current values.
#pragma once

#include <backplane/abi.h>
#include <backplane/sdk/status.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace bp::plugin {

struct CounterValue {
  const char* name;  // must stay valid until the plugin is unloaded: a string literal
  uint64_t value;
};

// Writes `values` into the core's array as read_counters promises: at most `capacity` entries,
// each at the core's own struct_size and only the fields that fit in it, and their total count.
inline bp_status write_counters(std::span<const CounterValue> values, bp_counter* counters,
                                int64_t capacity, int64_t* count) {
  if (count == nullptr || capacity < 0 || (capacity > 0 && counters == nullptr)) {
    return fail(BP_STATUS_INVALID_ARGUMENT,
                "read_counters: needs a count pointer, and room for `capacity` counters");
  }
  *count = static_cast<int64_t>(values.size());
  if (capacity == 0) return BP_STATUS_OK;
  const size_t entry_size = counters[0].struct_size;
  const auto fits = [entry_size](size_t offset, size_t size) { return offset + size <= entry_size; };
  const size_t written = std::min(values.size(), static_cast<size_t>(capacity));
  for (size_t i = 0; i < written; ++i) {
    auto* entry = reinterpret_cast<bp_counter*>(reinterpret_cast<char*>(counters) + i * entry_size);
    if (fits(offsetof(bp_counter, name), sizeof entry->name)) entry->name = values[i].name;
    if (fits(offsetof(bp_counter, value), sizeof entry->value)) entry->value = values[i].value;
  }
  return BP_STATUS_OK;
}

}  // namespace bp::plugin
