// The counters the cpu backend reports through bp_plugin::read_counters: its oneDNN primitive
// cache's hits, misses, evictions, replacements, size and capacity, and how its packed weights
// were served.
#pragma once

#include <backplane/abi.h>

#include <cstdint>

namespace bp::cpu {

bp_status read_counters(bp_counter* counters, int64_t capacity, int64_t* count);

}  // namespace bp::cpu
