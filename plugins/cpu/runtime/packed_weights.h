// Weights reordered once into the layout a primitive wants, and kept in the primitive cache for
// as long as Backplane has not written into their storage: the core's storage version
// (bp::plugin::storage_version) says when they must be reordered again, after an optimizer step
// or any other in-place write. Weights whose writes the core cannot vouch for, and every weight
// while the cache is off (BACKPLANE_CPU_PRIMITIVE_CACHE=0), are reordered on every call.
#pragma once

#include "runtime/primitive_cache.h"
#include "runtime/scratch_buffer.h"

#include <backplane/abi.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <memory>
#include <optional>

namespace bp::cpu::onednn {

// A reorder between two layouts of one tensor, made once with the primitive that needs it.
struct Reorder {
  Reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);
  // Reads `source` in `from`'s layout and writes `target` in `to`'s. Call inside a
  // ThreadCountScope.
  void run(const void* source, void* target) const;

  dnnl::memory::desc from, to;
  dnnl::reorder primitive;
  dnnl::memory::desc scratchpad;
};

struct PackedWeightStatistics {
  uint64_t hits = 0;    // calls served by a kept reorder
  uint64_t packs = 0;   // reorders kept for later calls (first ones, and after writes)
  uint64_t unkept = 0;  // reorders for one call alone
};

// `weight`, a tensor input of the running kernel whose elements lie densely at `dense` in
// reorder.from's layout, in reorder.to's layout. `key` names the reorder (the primitive's key
// under PrimitiveKind::PackedWeights); the weight's storage and view are added to it.
class PackedWeight {
 public:
  PackedWeight(const DLTensor& weight, const void* dense, const Reorder& reorder, CacheKey key);
  const void* data() const;

 private:
  struct Entry;
  std::shared_ptr<const Entry> kept_;
  std::optional<ScratchBuffer> for_this_call_;
};

PackedWeightStatistics packed_weight_statistics();

}  // namespace bp::cpu::onednn
