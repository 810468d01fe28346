// embedding and index_select: out's slice i along one dim is the source's slice index[i], as one
// gather over out's elements (kernels/gather.cu). The meta step converted the indices to Int64.
// An index out of range is an error naming it, as on the CPU backend; out is then left partly
// written.
#include "CUDANativeFunctions.h"

#include "tensor_access.h"

#include <array>
#include <string>
#include <string_view>

namespace bp::cuda {
namespace {

// Walks out's elements with the source (whose picked dim contributes index * index_stride
// instead) and the index tensor (read at each element's position along the picked dims).
void gather_into(std::string_view op, const TensorView& out, const Operand& src, const Operand& index,
                 int64_t index_stride, int64_t limit) {
  const OnDevice on(out);
  Device& device = on.device();
  DeviceScratch scratch(device);
  for_each_launch<3>(device, out.sizes(), {operand_of(out), src, index}, [&](const ElementwiseLaunch<3>& launch) {
    const std::optional<int64_t> bad = launch_gather(element_size(out.dtype()), launch, index_stride, limit, scratch);
    if (bad) {
      throw plugin::Error(BP_STATUS_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(*bad) +
                                                          " is out of range for a dimension of size " +
                                                          std::to_string(limit));
    }
  });
}

}  // namespace

void index_select_out(const TensorView& self, int64_t dim, const TensorView& index, const TensorView& out) {
  require_dtype("index_select", "index", index, DType::Int64);
  require_dtype("index_select", "out", out, self.dtype());
  if (self.dim() == 0) {  // one element, picked by index 0
    gather_into("index_select", out, operand_of(self), operand_of(index), 0, 1);
    return;
  }
  dim = wrap_dim("index_select", dim, self.dim());
  const auto d = static_cast<size_t>(dim);
  DimValues<int64_t> src_strides(static_cast<size_t>(self.dim()), 0), index_strides(src_strides.size(), 0);
  for (size_t k = 0; k < src_strides.size(); ++k) src_strides[k] = k == d ? 0 : self.stride(static_cast<int64_t>(k));
  index_strides[d] = index.dim() == 0 ? 0 : index.stride(0);
  gather_into("index_select", out, {address_of(self), src_strides.span(), element_size(self.dtype())},
              {address_of(index), index_strides.span(), element_size(DType::Int64)}, self.stride(dim), self.size(dim));
}

// out[m..., :] = weight[indices[m...], :]: out's leading dims are indices' dims.
void embedding_out(const TensorView& weight, const TensorView& indices, int64_t /*padding_idx: only changes gradients*/,
                   bool /*scale_grad_by_freq*/, bool /*sparse*/, const TensorView& out) {
  require_dtype("embedding", "indices", indices, DType::Int64);
  require_dtype("embedding", "out", out, weight.dtype());
  plugin::check(weight.dim() == 2 && out.dim() == indices.dim() + 1,
                "embedding: expected a 2-D weight and an output of indices' dims plus one");
  const size_t last = static_cast<size_t>(indices.dim());
  DimValues<int64_t> weight_strides(last + 1, 0), index_strides(last + 1, 0);
  weight_strides[last] = weight.stride(1);
  for (size_t k = 0; k < last; ++k) index_strides[k] = indices.stride(static_cast<int64_t>(k));
  gather_into("embedding", out, {address_of(weight), weight_strides.span(), element_size(weight.dtype())},
              {address_of(indices), index_strides.span(), element_size(DType::Int64)}, weight.stride(0),
              weight.size(0));
}

}  // namespace bp::cuda
