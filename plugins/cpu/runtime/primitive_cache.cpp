// The primitive cache (primitive_cache.h): BACKPLANE_CPU_PRIMITIVE_CACHE's parsing, key hashing,
// least-recently-used lookup and insertion, and its statistics.
#include "runtime/primitive_cache.h"

#include "runtime/onednn.h"

#include <backplane/sdk/log.hpp>
#include <backplane/sdk/status.hpp>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

namespace bp::cpu::onednn {

int64_t cache_capacity_from(const char* value) {
  if (value == nullptr) return kDefaultCacheCapacity;
  const char* const end = value + std::strlen(value);
  int64_t capacity = 0;
  const auto [stop, error] = std::from_chars(value, end, capacity);
  if (error == std::errc() && stop == end && capacity >= 0 && capacity <= kMaxCacheCapacity) {
    return capacity;
  }
  plugin::warn(std::string("BACKPLANE_CPU_PRIMITIVE_CACHE='") + value +
               "' is not a number of cached primitives from 0 (no caching) to " +
               std::to_string(kMaxCacheCapacity) + "; using the default, " +
               std::to_string(kDefaultCacheCapacity));
  return kDefaultCacheCapacity;
}

const char* name_of(PrimitiveKind kind) {
  switch (kind) {
    case PrimitiveKind::Matmul: return "matmul";
    case PrimitiveKind::Convolution: return "convolution";
    case PrimitiveKind::Pooling: return "pooling";
    case PrimitiveKind::BatchNormalization: return "batch normalization";
    case PrimitiveKind::ConvolutionBackward: return "backward convolution";
    case PrimitiveKind::BatchNormalizationTraining: return "training batch normalization";
    case PrimitiveKind::BatchNormalizationBackward: return "backward batch normalization";
    case PrimitiveKind::PackedWeights: return "weight reorder";
  }
  return "unknown";
}

CacheKey::CacheKey(PrimitiveKind kind) {
  words_.reserve(32);
  add(static_cast<int64_t>(kind));
  add(static_cast<int64_t>(thread_count()));
}

// FNV-1a over the words' bytes.
size_t CacheKey::hash() const {
  uint64_t hash = 14695981039346656037ull;
  for (const int64_t word : words_) {
    auto bits = static_cast<uint64_t>(word);
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= bits & 0xffu;
      hash *= 1099511628211ull;
      bits >>= 8;
    }
  }
  return static_cast<size_t>(hash);
}

std::shared_ptr<const CachedPrimitives> PrimitiveCache::find(const CacheKey& key,
                                                             const IsCurrent& current) {
  const std::lock_guard lock(mutex_);
  const auto found = index_.find(key);
  if (found == index_.end() || (current && !current(*found->second->second))) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  entries_.splice(entries_.begin(), entries_, found->second);
  return found->second->second;
}

std::shared_ptr<const CachedPrimitives> PrimitiveCache::insert(
    const CacheKey& key, std::shared_ptr<const CachedPrimitives> entry, const IsCurrent& current) {
  if (capacity_ == 0) return entry;
  const std::lock_guard lock(mutex_);
  if (const auto found = index_.find(key); found != index_.end()) {
    Entries::iterator place = found->second;
    if (!current || current(*place->second)) return place->second;
    place->second = std::move(entry);
    entries_.splice(entries_.begin(), entries_, place);
    ++replacements_;
    return place->second;
  }
  entries_.emplace_front(key, std::move(entry));
  index_.emplace(key, entries_.begin());
  if (entries_.size() > capacity_) {
    index_.erase(entries_.back().first);
    entries_.pop_back();
    ++evictions_;
  }
  return entries_.front().second;
}

void PrimitiveCache::unavailable(PrimitiveKind kind, const dnnl::error& e) {
  throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                      std::string("oneDNN could not make a ") + name_of(kind) +
                          " primitive for these arguments on this CPU: " + e.what());
}

CacheStatistics PrimitiveCache::statistics() const {
  const std::lock_guard lock(mutex_);
  return {hits_, misses_, evictions_, replacements_, entries_.size(), capacity_};
}

PrimitiveCache& primitive_cache() {
  // Never destroyed: the core may run kernels from static destructors during exit.
  static PrimitiveCache* const cache =
      new PrimitiveCache(cache_capacity_from(secure_getenv("BACKPLANE_CPU_PRIMITIVE_CACHE")));
  return *cache;
}

}  // namespace bp::cpu::onednn
