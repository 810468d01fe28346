// What the meta step computes for each output, and how a given `out=` or in-place tensor is
// checked against it.
#pragma once

#include <backplane/device.h>
#include <backplane/dim_vector.h>
#include <backplane/factories.h>
#include <backplane/sdk/dtype.hpp>
#include <backplane/tensor.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

namespace bp {

struct OutputSpec {
  DimVector sizes;
  DType dtype = kFloat32;
  // nullopt when no tensor argument decides the device (arange): an out= tensor may be on any
  // device, and a fresh output goes to default_device().
  std::optional<Device> device;
};

namespace detail {

// A fresh, contiguous output (through the device's caching allocator).
inline Tensor allocate_output(const OutputSpec& spec) {
  return empty(spec.sizes, spec.dtype, spec.device ? *spec.device : default_device());
}

// How an op's outputs may share memory with its inputs (ops.yaml's `pointwise:`).
enum class Aliasing {
  SameView,  // an output may be an input exactly (same memory, sizes and strides): pointwise ops
  None,      // an output may share no memory with an input
};

// The bytes a view's elements span, from the start of its storage: [begin, end). A view with no
// elements spans one element's bytes from its offset.
struct ByteSpan {
  int64_t begin, end;
};
ByteSpan byte_span(const Tensor& t);

// Whether two tensors may have an element in common: their spans overlap in one storage, or in
// host memory (host storages may borrow the same buffer). Conservative: views that interleave
// without sharing an element count as sharing.
bool may_share_memory(const Tensor& a, const Tensor& b);

// The tensors an op reads, as its meta step leaves them: what its outputs are checked against.
// Holds pointers to the caller's locals, without allocating.
class ReadTensors {
 public:
  static constexpr size_t kMaxTensors = 8;  // Tensor and Tensor? arguments of one op

  ReadTensors() = default;
  template <typename... Tensors>
  explicit ReadTensors(const Tensors&... tensors) {
    static_assert(sizeof...(Tensors) <= kMaxTensors,
                  "an op reads more tensors than ReadTensors holds");
    static_assert((int{std::is_same_v<Tensors, std::vector<Tensor>>} + ... + 0) <= 1,
                  "ReadTensors holds one Tensor[] argument");
    (add(tensors), ...);
  }
  // Calls visit(tensor) for each defined tensor.
  template <typename Visit>
  void for_each(Visit visit) const {
    for (size_t i = 0; i < count_; ++i) visit(*singles_[i]);
    if (list_) {
      for (const Tensor& t : *list_) visit(t);
    }
  }

 private:
  void add(const Tensor& t) {
    if (t.defined()) singles_[count_++] = &t;
  }
  void add(const std::optional<Tensor>& t) {
    if (t) add(*t);
  }
  void add(const std::vector<Tensor>& list) { list_ = &list; }

  std::array<const Tensor*, kMaxTensors> singles_{};
  size_t count_ = 0;
  const std::vector<Tensor>* list_ = nullptr;
};

// An `out=` or in-place tensor checked against its spec.
//  - Out: a tensor of another shape is an error unless it has no elements, in which case it
//    is resized (given new storage) as PyTorch does.
//  - InPlace: the shape must match exactly.
//  - In both, a different device is an error; a different dtype is an error unless the
//    computed dtype can be cast to it (PyTorch's can_cast), in which case the kernel writes a
//    temporary and finish() copies it over.
//  - A non-contiguous tensor also gets a temporary, so kernels always write contiguous outputs
//    of the dtype their meta step computed.
//  - So does a tensor that shares memory with one of `inputs` other than as `aliasing` allows:
//    the kernel then reads the inputs as they were (x.add_(x[0]), mm_out(a, a, b)).
//  - A tensor some of whose elements share memory (an expanded view, or strides that overlap
//    as empty_strided({2, 2}, {1, 1})) is an error: the result could not be stored in it. See
//    check_no_internal_overlap (tensor/internal_overlap.h) for what is decided exactly.
class OutArg {
 public:
  enum class Kind { Out, InPlace };
  OutArg(Tensor& given, const OutputSpec& spec, Kind kind, const char* op, const char* arg,
         const ReadTensors& inputs, Aliasing aliasing);
  // The tensor to hand to the kernel.
  const Tensor& target() const { return temporary_.defined() ? temporary_ : given_; }
  void finish();

 private:
  Tensor& given_;
  Tensor temporary_;
};

}  // namespace detail
}  // namespace bp
