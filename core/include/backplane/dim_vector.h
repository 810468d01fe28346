// Sizes and strides: up to kInlineDims values stored inline, so that tensors of ordinary rank
// and the meta step's output shapes need no heap allocation.
#pragma once

#include <backplane/array_ref.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>

namespace bp {

class DimVector {
 public:
  static constexpr size_t kInlineDims = 6;

  DimVector() = default;
  explicit DimVector(size_t size, int64_t value = 0) { assign(size, value); }
  DimVector(IntArrayRef values) { assign(values); }  // NOLINT
  DimVector(std::initializer_list<int64_t> values) { assign(IntArrayRef(values)); }
  DimVector(const DimVector& other) { assign(other.ref()); }
  DimVector& operator=(const DimVector& other) {
    if (this != &other) assign(other.ref());
    return *this;
  }
  DimVector(DimVector&& other) noexcept { *this = std::move(other); }
  DimVector& operator=(DimVector&& other) noexcept {
    if (this == &other) return *this;
    if (other.heap_) {
      heap_ = std::move(other.heap_);
      capacity_ = other.capacity_;
      size_ = other.size_;
      other.capacity_ = kInlineDims;
      other.size_ = 0;
    } else {
      assign(other.ref());
    }
    return *this;
  }

  void assign(IntArrayRef values) {
    reserve(values.size());
    copy_values(values.data(), values.size(), data());
    size_ = values.size();
  }
  void assign(size_t size, int64_t value) {
    reserve(size);
    fill_values(value, size, data());
    size_ = size;
  }
  void resize(size_t size, int64_t value = 0) {
    reserve(size);
    if (size > size_) fill_values(value, size - size_, data() + size_);
    size_ = size;
  }
  void push_back(int64_t value) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data()[size_++] = value;
  }
  void insert(size_t pos, int64_t value) {
    push_back(0);
    std::copy_backward(data() + pos, data() + size_ - 1, data() + size_);
    data()[pos] = value;
  }
  void erase(size_t pos) {
    std::copy(data() + pos + 1, data() + size_, data() + pos);
    --size_;
  }

  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  IntArrayRef ref() const { return {data(), size_}; }
  operator IntArrayRef() const { return ref(); }  // NOLINT

  friend bool operator==(const DimVector& a, const DimVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  // Shapes are short, and every op copies and fills a few: unrolled inline, that costs a
  // fraction of a call to memmove or memset (which a plain loop would be turned into).
  // set(i) writes element i, for each i < n.
  template <typename Set>
  static void for_each_index(size_t n, Set&& set) {
    switch (n) {
      case 6: set(5); [[fallthrough]];
      case 5: set(4); [[fallthrough]];
      case 4: set(3); [[fallthrough]];
      case 3: set(2); [[fallthrough]];
      case 2: set(1); [[fallthrough]];
      case 1: set(0); [[fallthrough]];
      case 0: return;
      default:
        for (size_t i = 0; i < n; ++i) set(i);
    }
  }
  static void copy_values(const int64_t* from, size_t n, int64_t* to) {
    for_each_index(n, [&](size_t i) { to[i] = from[i]; });
  }
  static void fill_values(int64_t value, size_t n, int64_t* to) {
    for_each_index(n, [&](size_t i) { to[i] = value; });
  }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    auto grown = std::make_unique<int64_t[]>(n);
    std::copy(data(), data() + size_, grown.get());
    heap_ = std::move(grown);
    capacity_ = n;
  }

  int64_t inline_[kInlineDims];  // only the first size_ are ever read
  std::unique_ptr<int64_t[]> heap_;
  size_t size_ = 0;
  size_t capacity_ = kInlineDims;
};

}  // namespace bp
