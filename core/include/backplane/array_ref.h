// Non-owning views of int lists in public signatures: bp::sum(x, {0, 1}) works without
// building a std::vector.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

namespace bp {

class IntArrayRef {
 public:
  IntArrayRef() = default;
  // The list lives until the end of the full expression that calls the op, which is as long as
  // an argument is used; GCC's lifetime warning cannot see that.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  IntArrayRef(std::initializer_list<int64_t> values)  // NOLINT: {1, 2} at call sites
      : data_(values.begin()), size_(values.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  IntArrayRef(const std::vector<int64_t>& values)  // NOLINT
      : data_(values.data()), size_(values.size()) {}
  IntArrayRef(std::span<const int64_t> values)  // NOLINT
      : data_(values.data()), size_(values.size()) {}
  IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  // One value, as PyTorch's C++ API takes it: conv2d(x, w, b, /*stride=*/2) means [2] (which
  // an int[2] argument reads as [2, 2]).
  IntArrayRef(const int64_t& value) : data_(&value), size_(1) {}  // NOLINT

  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t operator[](size_t i) const { return data_[i]; }
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  friend bool operator==(IntArrayRef a, IntArrayRef b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

// A schema `int[]?`: absent, or a list (possibly empty).
class OptionalIntArrayRef {
 public:
  OptionalIntArrayRef() = default;
  OptionalIntArrayRef(std::nullopt_t) {}                                         // NOLINT
  OptionalIntArrayRef(IntArrayRef values) : value_(values), has_value_(true) {}  // NOLINT
  OptionalIntArrayRef(std::initializer_list<int64_t> values)
      : value_(IntArrayRef(values)), has_value_(true) {}  // NOLINT
  OptionalIntArrayRef(const std::vector<int64_t>& values)
      : value_(IntArrayRef(values)), has_value_(true) {}  // NOLINT
  // An owned `int[]?` (what autograd saves for a backward formula).
  OptionalIntArrayRef(const std::optional<std::vector<int64_t>>& values)  // NOLINT
  {
    if (values) *this = OptionalIntArrayRef(*values);
  }

  bool has_value() const { return has_value_; }
  explicit operator bool() const { return has_value(); }
  IntArrayRef value() const { return value_; }
  IntArrayRef operator*() const { return value_; }

 private:
  // Both always initialised (not a std::optional): code that reads the list only when present
  // may be compiled to load it first, and an empty list is then what it loads.
  IntArrayRef value_;
  bool has_value_ = false;
};

}  // namespace bp
