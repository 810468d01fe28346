// Loops over strided tensors that share one shape, for backends whose device pointers are host
// addresses: the building block of the CPU backend's kernels, and of any such vendor backend.
// Nothing here allocates; loop state lives in fixed arrays of kMaxDims entries.
#pragma once

#include <backplane/sdk/convert_elements.hpp>
#include <backplane/sdk/dispatch.hpp>
#include <backplane/sdk/status.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace bp::plugin {

// More dimensions than any real tensor has; a tensor with more is refused with a message.
inline constexpr size_t kMaxDims = 64;

inline void check_dim_count(size_t ndim) {
  if (ndim > kMaxDims) {
    throw Error(BP_STATUS_UNIMPLEMENTED, "strided loops support tensors of at most " +
                                             std::to_string(kMaxDims) + " dimensions, got " +
                                             std::to_string(ndim));
  }
}

// One value per dimension of a tensor, stored inline.
template <typename T>
class DimValues {
 public:
  explicit DimValues(size_t size, T fill = T{}) : size_(size) {
    check_dim_count(size);
    values_.fill(fill);
  }
  size_t size() const { return size_; }
  T& operator[](size_t d) { return values_[d]; }
  const T& operator[](size_t d) const { return values_[d]; }
  std::span<const T> span() const { return {values_.data(), size_}; }

 private:
  std::array<T, kMaxDims> values_;
  size_t size_;
};

// One element offset per operand of a loop.
template <size_t N>
using Offsets = std::array<int64_t, N>;

template <size_t N>
inline void advance(Offsets<N>& offsets, const Offsets<N>& step, int64_t times = 1) {
  for (size_t k = 0; k < N; ++k) offsets[k] += step[k] * times;
}

// Walks N operands of one shape in row-major order, as rows along the innermost dimension.
// Dimensions of size 1 are dropped and neighbouring dimensions that every operand lays out as
// one are merged, so a contiguous tensor of any shape (or one broadcast along whole leading
// dimensions) is walked as few long rows.
template <size_t N>
class StridedLoop {
 public:
  StridedLoop() = default;
  // strides[k] holds operand k's strides over `sizes`, in elements.
  StridedLoop(std::span<const int64_t> sizes,
              const std::array<std::span<const int64_t>, N>& strides) {
    for (size_t d = 0; d < sizes.size(); ++d) {
      Offsets<N> stride;
      for (size_t k = 0; k < N; ++k) stride[k] = strides[k][d];
      push_dim(sizes[d], stride);
    }
  }

  // Appends a dimension inside those pushed so far.
  void push_dim(int64_t size, const Offsets<N>& stride) {
    if (size == 0) empty_ = true;
    if (size <= 1) return;
    if (ndim_ > 0 && lays_out_as_one(dims_[ndim_ - 1], size, stride)) {
      dims_[ndim_ - 1] = {dims_[ndim_ - 1].size * size, stride};
      return;
    }
    check_dim_count(ndim_ + 1);
    dims_[ndim_++] = {size, stride};
  }

  // The dimensions left after dropping and merging, outermost first (a single element has
  // none), and their strides.
  size_t dim_count() const { return ndim_; }
  const Offsets<N>& stride(size_t d) const { return dims_[d].stride; }

  // Calls row(offsets, step, length) for each row: the row's first element is at `offsets`
  // (element offsets per operand, starting from `start`), the next ones `step` apart.
  template <typename RowFn>
  void for_each_row(RowFn&& row, const Offsets<N>& start = {}) const {
    if (empty_) return;
    if (ndim_ == 0) {  // a single element
      row(start, Offsets<N>{}, int64_t{1});
      return;
    }
    const Dim& inner = dims_[ndim_ - 1];
    const size_t outer_dims = ndim_ - 1;
    std::array<int64_t, kMaxDims> index;
    std::fill_n(index.begin(), outer_dims, 0);
    Offsets<N> offsets = start;
    for (;;) {
      row(static_cast<const Offsets<N>&>(offsets), inner.stride, inner.size);
      // Odometer step over the outer dimensions, innermost first.
      size_t d = outer_dims;
      for (;;) {
        if (d == 0) return;
        --d;
        if (++index[d] < dims_[d].size) {
          advance(offsets, dims_[d].stride);
          break;
        }
        index[d] = 0;
        advance(offsets, dims_[d].stride, -(dims_[d].size - 1));
      }
    }
  }

 private:
  struct Dim {
    int64_t size;
    Offsets<N> stride;
  };

  // An outer dimension and the inner one after it can be walked as one when, in every operand,
  // one outer step spans exactly the whole inner dimension.
  static bool lays_out_as_one(const Dim& outer, int64_t inner_size,
                              const Offsets<N>& inner_stride) {
    for (size_t k = 0; k < N; ++k) {
      if (outer.stride[k] != inner_stride[k] * inner_size) return false;
    }
    return true;
  }

  std::array<Dim, kMaxDims> dims_;
  size_t ndim_ = 0;
  bool empty_ = false;
};

// A typed operand of map_elements: the first element and the strides over the loop's shape.
template <typename T>
struct Operand {
  T* data;
  std::span<const int64_t> strides;
};

// The core hands a kernel every dtype its op takes, so a typed operand checks that the view
// holds T: reading int8 elements as float would run past the end of the tensor.
template <typename T>
void check_operand_dtype(const TensorView& view) {
  if (view.dtype() == kDTypeOf<T>) return;
  throw Error(BP_STATUS_UNIMPLEMENTED,
              "this kernel reads its operands as " + std::string(dtype_name(kDTypeOf<T>)) +
                  " and cannot take a " + std::string(dtype_name(view.dtype())) +
                  " tensor (a kernel for several dtypes picks its element type with "
                  "bp::plugin::visit)");
}

template <typename T>
Operand<T> output_operand(const TensorView& view) {
  check_operand_dtype<T>(view);
  return {view.data<T>(), view.strides()};
}

template <typename T>
Operand<const T> input_operand(const TensorView& view) {
  check_operand_dtype<T>(view);
  return {view.data<const T>(), view.strides()};
}

// Whether T is stored in another type than it is computed in (Half, BFloat16).
template <typename T>
inline constexpr bool kConvertsToCompute = !std::is_same_v<T, compute_t<T>>;

// How many elements a row of map_elements takes at a time where it works in blocks: when an
// operand is stored as one type and computed as another, or broadcast along the row.
inline constexpr int64_t kConversionBlock = 256;

namespace map_detail {

// Room for one block of converted values, left uninitialised.
template <typename C>
struct Block {
  Block() {}  // NOLINT(modernize-use-equals-default): "= default" would zero it in a tuple
  C values[kConversionBlock];
};

// values[j] = data[j * step] converted to C, for j < count. Strided elements are gathered
// first, so that every conversion runs as convert_elements' block loop.
template <typename C, typename T>
void load_block(C* values, const T* data, int64_t step, int64_t count) {
  if (step == 1) {
    convert_elements(data, values, count);
  } else {
    T gathered[kConversionBlock];
    for (int64_t j = 0; j < count; ++j) gathered[j] = data[j * step];
    convert_elements(gathered, values, count);
  }
}

// data[j * step] = values[j] converted to T, for j < count.
template <typename T, typename R>
void store_block(T* data, int64_t step, const R* values, int64_t count) {
  if (step == 1) {
    convert_elements(values, data, count);
  } else {
    T converted[kConversionBlock];
    convert_elements(values, converted, count);
    for (int64_t j = 0; j < count; ++j) data[j * step] = converted[j];
  }
}

// Rows from this length on read an input broadcast along them from a block of copies of its
// value: shorter rows spend more on filling the block than the plain loop saves over the strided
// one (bench/README.md).
inline constexpr int64_t kMinRowOfCopies = 16;

// The values of an input that map_row reads along a row `step` (0 or 1) apart: `data` itself,
// or, where the input is broadcast along the row (step 0), a block filled with copies of its one
// value, so that a loop over the row reads it side by side like the others. The block is the
// thread's own, one per input: on the stack it would grow the frame of every kernel that
// map_elements is inlined into, and move the spills of those that spill (tanh-approximated GELU
// runs slower then; bench/README.md).
template <size_t Input, typename T>
const T* side_by_side(const T* data, int64_t step, int64_t length) {
  if (step != 0) return data;
  static thread_local Block<T> block;
  std::fill_n(block.values, std::min(kConversionBlock, length), *data);
  return block.values;
}

// One row of map_elements: `length` elements, operand k's `step[k]` apart.
template <typename Fn, typename Out, typename... In, size_t... K>
void map_row(Fn& fn, int64_t length, const Offsets<1 + sizeof...(In)>& step, Out* out,
             std::index_sequence<K...>, const In*... in) {
  if constexpr (kConvertsToCompute<Out> || (kConvertsToCompute<In> || ...)) {
    // Conversions to and from 16-bit floats run as loops of their own over blocks, so that
    // they vectorise even where fn does not.
    using Result = decltype(fn(std::declval<compute_t<In>>()...));
    std::tuple<Block<compute_t<In>>...> inputs;
    Block<Result> results;
    for (int64_t begin = 0; begin < length; begin += kConversionBlock) {
      const int64_t count = std::min(kConversionBlock, length - begin);
      (load_block(std::get<K>(inputs).values, in + begin * step[K + 1], step[K + 1], count), ...);
      for (int64_t j = 0; j < count; ++j) results.values[j] = fn(std::get<K>(inputs).values[j]...);
      store_block(out + begin * step[0], step[0], results.values, count);
    }
  } else if ((step[0] == 1) && ((step[K + 1] == 1) && ...)) {
    // Unit steps everywhere: a plain indexed loop the compiler can vectorise.
    for (int64_t i = 0; i < length; ++i) out[i] = static_cast<Out>(fn(in[i]...));
  } else if (length >= kMinRowOfCopies && (step[0] == 1) &&
             ((step[K + 1] == 0 || step[K + 1] == 1) && ...)) {
    // Unit steps but for inputs broadcast along the row (x + a column): blocks of the plain
    // loop, the broadcast ones read from a block of copies, faster than the strided loop below
    // (whose steps the compiler cannot know) once rows are long enough to pay for the copies.
    const std::tuple first{side_by_side<K>(in, step[K + 1], length)...};
    for (int64_t begin = 0; begin < length; begin += kConversionBlock) {
      const int64_t count = std::min(kConversionBlock, length - begin);
      const std::tuple values{(std::get<K>(first) + begin * step[K + 1])...};
      Out* const out_block = out + begin;
      for (int64_t j = 0; j < count; ++j)
        out_block[j] = static_cast<Out>(fn(std::get<K>(values)[j]...));
    }
  } else {
    for (int64_t i = 0; i < length; ++i) {
      out[i * step[0]] = static_cast<Out>(fn(in[i * step[K + 1]]...));
    }
  }
}

}  // namespace map_detail

// out[i] = fn(in[i]...) for every index i of `sizes`: inputs are read as their compute types
// (float for Half and BFloat16) and the result is converted to Out. `out` may be one of the
// inputs (in-place ops): each element is read before it is written.
template <typename Fn, typename Out, typename... In>
void map_elements(std::span<const int64_t> sizes, Fn&& fn, Operand<Out> out,
                  Operand<const In>... in) {
  constexpr size_t N = 1 + sizeof...(In);
  const StridedLoop<N> loop(sizes, {out.strides, in.strides...});
  loop.for_each_row([&](const Offsets<N>& start, const Offsets<N>& step, int64_t length) {
    [&]<size_t... K>(std::index_sequence<K...> indices) {
      map_detail::map_row(fn, length, step, out.data + start[0], indices,
                          (in.data + start[K + 1])...);
    }
    (std::index_sequence_for<In...>{});
  });
}

// "[2, 3]", for messages.
inline std::string shape_string(std::span<const int64_t> sizes) {
  std::string text = "[";
  for (size_t d = 0; d < sizes.size(); ++d) text += (d ? ", " : "") + std::to_string(sizes[d]);
  return text + "]";
}

// Strides that read `view` as if expanded to `sizes`, with PyTorch's broadcasting: dimensions
// align at the right, and missing or size-1 dimensions repeat (stride 0).
inline DimValues<int64_t> broadcast_strides(std::string_view op, const TensorView& view,
                                            std::span<const int64_t> sizes) {
  DimValues<int64_t> strides(sizes.size(), 0);
  const int64_t lead = static_cast<int64_t>(sizes.size()) - view.dim();
  bool ok = lead >= 0;
  for (int64_t d = 0; ok && d < view.dim(); ++d) {
    if (view.size(d) == sizes[lead + d]) {
      strides[lead + d] = view.stride(d);
    } else {
      ok = view.size(d) == 1;
    }
  }
  if (!ok) {
    throw Error(BP_STATUS_INVALID_ARGUMENT,
                std::string(op) + ": cannot broadcast a tensor of shape " +
                    shape_string(view.sizes()) + " to shape " + shape_string(sizes));
  }
  return strides;
}

}  // namespace bp::plugin
