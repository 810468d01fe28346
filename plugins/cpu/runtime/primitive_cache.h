// The plugin's cache of oneDNN primitives. Creating a primitive descriptor and its primitive
// costs far more than running a small one, so each op keeps what it made, keyed by everything
// that changes it (op, shapes, strides, dtypes, attributes, thread count), in a cache that
// forgets the least recently used entry when full. BACKPLANE_CPU_PRIMITIVE_CACHE sets its
// capacity; 0 turns it off. Hits, misses and evictions are the plugin's counters.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace bp::cpu::onednn {

// The cache's default capacity, and the largest BACKPLANE_CPU_PRIMITIVE_CACHE accepts.
inline constexpr int64_t kDefaultCacheCapacity = 1024;
inline constexpr int64_t kMaxCacheCapacity = 1 << 20;

// BACKPLANE_CPU_PRIMITIVE_CACHE's value (`value` may be null: unset) as a capacity; the
// default with a warning (bp::plugin::warn) for a value that is not a whole number from 0 to
// kMaxCacheCapacity.
int64_t cache_capacity_from(const char* value);

// What an op makes once and then reuses: its primitives and the descriptors running them needs.
struct CachedPrimitives {
  virtual ~CachedPrimitives() = default;
};

// Which ops make cache entries; the first word of every key, so that entries of different ops
// never share a key.
enum class PrimitiveKind : int64_t {
  Matmul = 1,
  Convolution,
  Pooling,
  BatchNormalization,
  ConvolutionBackward,
  BatchNormalizationTraining,
  BatchNormalizationBackward,
  PackedWeights,
};

// "matmul", for messages.
const char* name_of(PrimitiveKind kind);

// Everything that decides what an op's primitives are, as a sequence of words.
class CacheKey {
 public:
  // Starts with the op and the thread count that primitives are created for.
  explicit CacheKey(PrimitiveKind kind);

  CacheKey& add(int64_t value) {
    words_.push_back(value);
    return *this;
  }
  CacheKey& add(std::span<const int64_t> values) {
    add(static_cast<int64_t>(values.size()));
    words_.insert(words_.end(), values.begin(), values.end());
    return *this;
  }
  // By bit pattern: 0.0 and -0.0 are different keys, as they may be different attributes.
  CacheKey& add(double value) {
    int64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return add(bits);
  }

  PrimitiveKind kind() const { return static_cast<PrimitiveKind>(words_.front()); }
  bool operator==(const CacheKey& other) const = default;
  size_t hash() const;

 private:
  std::vector<int64_t> words_;
};

struct CacheStatistics {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  uint64_t replacements = 0;  // entries made anew because the one there was no longer current
  uint64_t size = 0;
  uint64_t capacity = 0;
};

class PrimitiveCache {
 public:
  explicit PrimitiveCache(int64_t capacity) : capacity_(static_cast<size_t>(capacity)) {}

  // The entry for `key`, made by make() (returning std::shared_ptr<const Entry>) on a miss.
  // make() runs without the lock held, so a miss never blocks other ops; two threads missing
  // on one key at once both make it, and the first one stored stays. When make() throws,
  // nothing is stored; oneDNN's own error becomes one that names the primitive.
  template <typename Entry, typename Make>
  std::shared_ptr<const Entry> get(const CacheKey& key, Make&& make) {
    if (auto found = find(key)) return std::static_pointer_cast<const Entry>(std::move(found));
    return std::static_pointer_cast<const Entry>(insert(key, made(key, make)));
  }

  // The entry for `key` where is_current(entry) holds, else a new one from make(), which then
  // takes the place of the entry that was no longer current (counted as replaced): for entries
  // computed from data that may change, which carry what they were computed from.
  template <typename Entry, typename IsCurrent, typename Make>
  std::shared_ptr<const Entry> get_current(const CacheKey& key, IsCurrent&& is_current,
                                           Make&& make) {
    const auto current = [&](const CachedPrimitives& entry) {
      return is_current(static_cast<const Entry&>(entry));
    };
    if (auto found = find(key, current)) {
      return std::static_pointer_cast<const Entry>(std::move(found));
    }
    return std::static_pointer_cast<const Entry>(insert(key, made(key, make), current));
  }

  CacheStatistics statistics() const;
  // 0 when the cache is off. Fixed at construction, so read without the lock.
  size_t capacity() const { return capacity_; }

 private:
  struct KeyHash {
    size_t operator()(const CacheKey& key) const { return key.hash(); }
  };
  using Entries = std::list<std::pair<CacheKey, std::shared_ptr<const CachedPrimitives>>>;

  using IsCurrent = std::function<bool(const CachedPrimitives&)>;

  // make()'s entry; oneDNN's error becomes one that names the primitive.
  template <typename Make>
  static auto made(const CacheKey& key, Make& make) -> decltype(make()) {
    try {
      return make();
    } catch (const dnnl::error& e) {
      unavailable(key.kind(), e);
    }
  }

  // Counts a hit (and makes the entry the most recently used) or a miss; an entry that is not
  // `current` is a miss.
  std::shared_ptr<const CachedPrimitives> find(const CacheKey& key,
                                               const IsCurrent& current = nullptr);
  // Stores `entry` unless a `current` entry is there already (then returns that), replacing
  // one that is not, and evicting the least recently used entry when full.
  std::shared_ptr<const CachedPrimitives> insert(const CacheKey& key,
                                                 std::shared_ptr<const CachedPrimitives> entry,
                                                 const IsCurrent& current = nullptr);
  [[noreturn]] static void unavailable(PrimitiveKind kind, const dnnl::error& e);

  const size_t capacity_;
  mutable std::mutex mutex_;  // guards everything below
  Entries entries_;           // most recently used first
  std::unordered_map<CacheKey, Entries::iterator, KeyHash> index_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
  uint64_t evictions_ = 0;
  uint64_t replacements_ = 0;
};

// The plugin's cache, made on first use with BACKPLANE_CPU_PRIMITIVE_CACHE's capacity.
PrimitiveCache& primitive_cache();

}  // namespace bp::cpu::onednn
