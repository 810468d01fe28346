// Packed weights (packed_weights.h): the reorder, the cache entry keyed by storage and view and
// checked against the storage's version, and the counters.
#include "runtime/packed_weights.h"

#include "runtime/onednn.h"
#include "runtime/onednn_memory.h"

#include <backplane/sdk/storage_version.hpp>

#include <atomic>
#include <span>
#include <utility>

namespace bp::cpu::onednn {
namespace {

std::atomic<uint64_t> g_hits{0};
std::atomic<uint64_t> g_packs{0};
std::atomic<uint64_t> g_unkept{0};

}  // namespace

Reorder::Reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to)
    : from(from), to(to) {
  const dnnl::reorder::primitive_desc descriptor(engine(), from, engine(), to, base_attributes());
  primitive = dnnl::reorder(descriptor);
  scratchpad = descriptor.scratchpad_desc();
}

void Reorder::run(const void* source, void* target) const {
  execute(primitive, scratchpad,
          {{DNNL_ARG_FROM, wrap(from, source)}, {DNNL_ARG_TO, wrap(to, target)}});
}

struct PackedWeight::Entry final : CachedPrimitives {
  Entry(plugin::StorageVersion source, const dnnl::memory::desc& layout)
      : source(source), packed(layout, engine()) {}
  plugin::StorageVersion source;  // the storage and its version the reorder read
  dnnl::memory packed;            // owns its buffer
};

PackedWeight::PackedWeight(const DLTensor& weight, const void* dense, const Reorder& reorder,
                           CacheKey key) {
  const std::optional<plugin::StorageVersion> source = plugin::storage_version(weight);
  if (!source || primitive_cache().capacity() == 0) {
    for_this_call_.emplace(reorder.to.get_size());
    reorder.run(dense, for_this_call_->data());
    g_unkept.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // The same storage seen through another offset or strides holds other weights.
  key.add(static_cast<int64_t>(source->storage)).add(static_cast<int64_t>(weight.byte_offset));
  key.add(std::span<const int64_t>(weight.strides, static_cast<size_t>(weight.ndim)));
  bool packed_now = false;
  kept_ = primitive_cache().get_current<Entry>(
      key, [&](const Entry& entry) { return entry.source == *source; },
      [&] {
        auto made = std::make_shared<Entry>(*source, reorder.to);
        reorder.run(dense, made->packed.get_data_handle());
        packed_now = true;
        return std::shared_ptr<const Entry>(std::move(made));
      });
  (packed_now ? g_packs : g_hits).fetch_add(1, std::memory_order_relaxed);
}

const void* PackedWeight::data() const {
  return kept_ ? kept_->packed.get_data_handle() : for_this_call_->data();
}

PackedWeightStatistics packed_weight_statistics() {
  return {g_hits.load(std::memory_order_relaxed), g_packs.load(std::memory_order_relaxed),
          g_unkept.load(std::memory_order_relaxed)};
}

}  // namespace bp::cpu::onednn
