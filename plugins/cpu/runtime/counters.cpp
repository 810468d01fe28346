// The plugin's counters (counters.h): the primitive cache's statistics, written through the
// SDK's write_counters.
#include "runtime/counters.h"

#include "runtime/packed_weights.h"
#include "runtime/primitive_cache.h"

#include <backplane/sdk/plugin.hpp>

namespace bp::cpu {

bp_status read_counters(bp_counter* counters, int64_t capacity, int64_t* count) {
  bp_status status = BP_STATUS_OK;
  const bp_status guarded = plugin::guard([&] {
    const onednn::CacheStatistics cache = onednn::primitive_cache().statistics();
    const onednn::PackedWeightStatistics packed = onednn::packed_weight_statistics();
    const plugin::CounterValue values[] = {
        {"primitive_cache.hits", cache.hits},
        {"primitive_cache.misses", cache.misses},
        {"primitive_cache.evictions", cache.evictions},
        {"primitive_cache.replacements", cache.replacements},
        {"primitive_cache.size", cache.size},
        {"primitive_cache.capacity", cache.capacity},
        {"packed_weights.hits", packed.hits},
        {"packed_weights.packs", packed.packs},
        {"packed_weights.unkept", packed.unkept},
    };
    status = plugin::write_counters(values, counters, capacity, count);
  });
  return guarded != BP_STATUS_OK ? guarded : status;
}

}  // namespace bp::cpu
