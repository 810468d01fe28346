#include "runtime/tensor_access.h"

#include "runtime/runtime.h"

#include <string>

namespace bp::cuda {
namespace {

// The AdamW step has the most operands.
constexpr size_t kMaxOperands = 7;

struct Dim {
  int64_t size = 1;
  std::array<int64_t, kMaxOperands> strides{};
};

// `sizes` with size-1 dimensions dropped and neighbours that every operand lays out as one
// merged, outermost first.
std::vector<Dim> merged_dims(std::span<const int64_t> sizes,
                             std::span<const std::span<const int64_t>> strides) {
  std::vector<Dim> dims;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool joins = !dims.empty();
    for (size_t k = 0; joins && k < strides.size(); ++k)
      joins = dims.back().strides[k] == strides[k][d] * sizes[d];
    if (joins) {
      dims.back().size *= sizes[d];
      for (size_t k = 0; k < strides.size(); ++k) dims.back().strides[k] = strides[k][d];
      continue;
    }
    Dim dim;
    dim.size = sizes[d];
    for (size_t k = 0; k < strides.size(); ++k) dim.strides[k] = strides[k][d];
    dims.push_back(dim);
  }
  return dims;
}

int64_t numel_of(std::span<const Dim> dims) {
  int64_t numel = 1;
  for (const Dim& dim : dims) numel *= dim.size;
  return numel;
}

// `dims` (outermost first, at most kMaxKernelDims) as a kernel shape, innermost first.
template <int N>
StridedShape<N> strided_shape(std::span<const Dim> dims) {
  StridedShape<N> shape;
  const int64_t numel = numel_of(dims);
  shape.ndim = static_cast<int32_t>(dims.size());
  shape.wide = numel > int64_t{UINT32_MAX};
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim& dim = dims[dims.size() - 1 - i];
    shape.sizes[i] = dim.size;
    if (!shape.wide) shape.divisors[i] = FastDivmod(static_cast<uint32_t>(dim.size));
    for (int k = 0; k < N; ++k) shape.strides[k][i] = dim.strides[static_cast<size_t>(k)];
  }
  return shape;
}

// Every operand's elements consecutive: one dimension of stride 1, or a single element.
template <int N>
bool dense(std::span<const Dim> dims) {
  if (dims.size() > 1) return false;
  for (int k = 0; dims.size() == 1 && k < N; ++k) {
    if (dims[0].strides[static_cast<size_t>(k)] != 1) return false;
  }
  return true;
}

template <size_t N>
std::array<std::span<const int64_t>, N> strides_of(const std::array<Operand, N>& operands) {
  std::array<std::span<const int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k) strides[k] = operands[k].strides;
  return strides;
}

}  // namespace

Device& device_of(const TensorView& view) { return Runtime::get().device(view.device().device_id); }

char* address_of(const TensorView& view) {
  return static_cast<char*>(view.handle()) + view.byte_offset();
}

Operand operand_of(const TensorView& view) {
  return {address_of(view), view.strides(), element_size(view.dtype())};
}

Operand broadcast_operand(std::string_view op, const TensorView& view,
                          std::span<const int64_t> sizes, DimValues<int64_t>& strides) {
  strides = plugin::broadcast_strides(op, view, sizes);
  return {address_of(view), strides.span(), element_size(view.dtype())};
}

template <int N>
void for_each_launch(Device& device, std::span<const int64_t> sizes,
                     const std::array<Operand, N>& operands,
                     const std::function<void(const ElementwiseLaunch<N>&)>& launch) {
  for (const int64_t size : sizes) {
    if (size == 0) return;
  }
  const auto all_strides = strides_of(operands);
  const std::vector<Dim> dims = merged_dims(sizes, all_strides);
  const size_t outer = dims.size() > kMaxKernelDims ? dims.size() - kMaxKernelDims : 0;
  const std::span<const Dim> inner(dims.data() + outer, dims.size() - outer);
  ElementwiseLaunch<N> base;
  base.target = device.launch_target();
  base.numel = numel_of(inner);
  base.dense = dense<N>(inner);
  if (!base.dense) base.shape = strided_shape<N>(inner);
  // Outer dimensions, walked here: an odometer over their indices, moving every data pointer.
  std::vector<int64_t> index(outer, 0);
  std::array<char*, N> data;
  for (int k = 0; k < N; ++k) data[k] = operands[k].data;
  for (;;) {
    ElementwiseLaunch<N> call = base;
    for (int k = 0; k < N; ++k) call.data[k] = data[k];
    launch(call);
    size_t d = outer;
    for (;;) {
      if (d == 0) return;
      --d;
      const int64_t steps = ++index[d] < dims[d].size ? 1 : -(dims[d].size - 1);
      if (steps < 0) index[d] = 0;
      for (int k = 0; k < N; ++k) {
        data[k] += steps * dims[d].strides[static_cast<size_t>(k)] *
                   static_cast<int64_t>(operands[k].element_size);
      }
      if (steps > 0) break;
    }
  }
}

template <int N>
GroupShape<N> group_shape(std::string_view op, std::span<const int64_t> sizes,
                          const DimValues<bool>& reduced,
                          const std::array<std::span<const int64_t>, N>& strides) {
  std::vector<int64_t> kept_sizes, member_sizes;
  std::array<std::vector<int64_t>, N> kept_strides, member_strides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    (reduced[d] ? member_sizes : kept_sizes).push_back(sizes[d]);
    for (int k = 0; k < N; ++k)
      (reduced[d] ? member_strides : kept_strides)[k].push_back(strides[k][d]);
  }
  auto part = [&](const std::vector<int64_t>& part_sizes,
                  const std::array<std::vector<int64_t>, N>& part_strides, int64_t& count) {
    std::array<std::span<const int64_t>, N> views;
    for (int k = 0; k < N; ++k) views[k] = part_strides[k];
    count = 1;
    for (const int64_t size : part_sizes) count *= size;
    const std::vector<Dim> dims = count == 0 ? std::vector<Dim>{} : merged_dims(part_sizes, views);
    if (dims.size() > kMaxKernelDims) {
      throw plugin::Error(
          BP_STATUS_UNIMPLEMENTED,
          std::string(op) + ": the cuda backend walks at most " + std::to_string(kMaxKernelDims) +
              " kept and " + std::to_string(kMaxKernelDims) +
              " reduced dimensions, and a tensor of shape " + plugin::shape_string(sizes) +
              " with these strides has more that cannot be merged; make it contiguous first");
    }
    return dims;
  };
  GroupShape<N> shape;
  const std::vector<Dim> kept = part(kept_sizes, kept_strides, shape.groups);
  const std::vector<Dim> members = part(member_sizes, member_strides, shape.group_size);
  shape.kept = strided_shape<N>(kept);
  shape.members = strided_shape<N>(members);
  for (int k = 0; k < N; ++k) {
    shape.dense_members[k] =
        members.empty() || (members.size() == 1 && members[0].strides[static_cast<size_t>(k)] == 1);
  }
  return shape;
}

template void for_each_launch<1>(Device&, std::span<const int64_t>, const std::array<Operand, 1>&,
                                 const std::function<void(const ElementwiseLaunch<1>&)>&);
template void for_each_launch<2>(Device&, std::span<const int64_t>, const std::array<Operand, 2>&,
                                 const std::function<void(const ElementwiseLaunch<2>&)>&);
template void for_each_launch<3>(Device&, std::span<const int64_t>, const std::array<Operand, 3>&,
                                 const std::function<void(const ElementwiseLaunch<3>&)>&);
template void for_each_launch<4>(Device&, std::span<const int64_t>, const std::array<Operand, 4>&,
                                 const std::function<void(const ElementwiseLaunch<4>&)>&);
template void for_each_launch<5>(Device&, std::span<const int64_t>, const std::array<Operand, 5>&,
                                 const std::function<void(const ElementwiseLaunch<5>&)>&);
template void for_each_launch<6>(Device&, std::span<const int64_t>, const std::array<Operand, 6>&,
                                 const std::function<void(const ElementwiseLaunch<6>&)>&);
template void for_each_launch<7>(Device&, std::span<const int64_t>, const std::array<Operand, 7>&,
                                 const std::function<void(const ElementwiseLaunch<7>&)>&);
template GroupShape<2> group_shape<2>(std::string_view, std::span<const int64_t>,
                                      const DimValues<bool>&,
                                      const std::array<std::span<const int64_t>, 2>&);
template GroupShape<3> group_shape<3>(std::string_view, std::span<const int64_t>,
                                      const DimValues<bool>&,
                                      const std::array<std::span<const int64_t>, 3>&);
template GroupShape<kAttentionOperands> group_shape<kAttentionOperands>(
    std::string_view, std::span<const int64_t>, const DimValues<bool>&,
    const std::array<std::span<const int64_t>, kAttentionOperands>&);
template GroupShape<kNormOperands> group_shape<kNormOperands>(
    std::string_view, std::span<const int64_t>, const DimValues<bool>&,
    const std::array<std::span<const int64_t>, kNormOperands>&);

DenseOutput::DenseOutput(Device& device, const TensorView& view, DeviceScratch& scratch)
    : device_(device),
      view_(view),
      data_(view.is_contiguous() ? static_cast<void*>(address_of(view))
                                 : scratch.allocate(static_cast<size_t>(view.numel()) *
                                                    element_size(view.dtype()))) {}

void DenseOutput::copy_back() const {
  if (view_.is_contiguous()) return;
  const auto ndim = static_cast<size_t>(view_.dim());
  DimValues<int64_t> dense_strides(ndim, 0);
  int64_t step = 1;
  for (size_t d = ndim; d-- > 0;) {
    dense_strides[d] = step;
    step *= view_.size(static_cast<int64_t>(d));
  }
  const size_t element_bytes = element_size(view_.dtype());
  for_each_launch<2>(
      device_, view_.sizes(),
      {operand_of(view_), Operand{static_cast<char*>(data_), dense_strides.span(), element_bytes}},
      [&](const ElementwiseLaunch<2>& launch) { launch_copy_bits(element_bytes, launch); });
}

DeviceScratch::~DeviceScratch() {
  for (void* block : blocks_) {
    try {
      device_.allocator().release(block);
    } catch (...) {  // every block came from this allocator, so release does not refuse it
    }
  }
}

void* DeviceScratch::allocate(size_t bytes) {
  blocks_.reserve(blocks_.size() + 1);
  void* block = device_.allocator().allocate(bytes);
  blocks_.push_back(block);
  return block;
}

uint32_t* DeviceScratch::zeroed_counters(int64_t count) { return device_.zeroed_counters(count); }

}  // namespace bp::cuda
