#include "kernels/layout.h"

#include <backplane/sdk/status.hpp>
#include <backplane/sdk/strided_loop.hpp>

#include <string>

namespace bp::opencl {
WalkShape collapse(std::span<const int64_t> sizes, const OperandStrides& strides,
                   std::string_view op, bool outer_allowed) {
  const size_t operands = strides.size();
  WalkShape shape;
  shape.size.fill(1);
  shape.strides.assign(operands, Dims8{});
  shape.numel = 1;
  for (int64_t size : sizes) shape.numel *= size;
  if (shape.numel == 0) return shape;  // nothing to walk

  // Outermost first: merged[i] = {size, stride of operand 0, stride of operand 1, ...}.
  std::vector<std::vector<int64_t>> merged;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool joins = !merged.empty();
    for (size_t k = 0; joins && k < operands; ++k) {
      joins = merged.back()[k + 1] == strides[k][d] * sizes[d];
    }
    if (joins) {
      merged.back()[0] *= sizes[d];
      for (size_t k = 0; k < operands; ++k) merged.back()[k + 1] = strides[k][d];
      continue;
    }
    std::vector<int64_t> dim{sizes[d]};
    for (size_t k = 0; k < operands; ++k) dim.push_back(strides[k][d]);
    merged.push_back(std::move(dim));
  }
  if (merged.size() > kMaxKernelDims && !outer_allowed) {
    throw plugin::Error(BP_STATUS_UNIMPLEMENTED,
                        std::string(op) + ": the opencl backend walks at most " +
                            std::to_string(kMaxKernelDims) + " dimensions, and a tensor of shape " +
                            plugin::shape_string(sizes) + " with these strides has " +
                            std::to_string(merged.size()) +
                            " that cannot be merged; make it contiguous first");
  }
  const size_t outer = merged.size() > kMaxKernelDims ? merged.size() - kMaxKernelDims : 0;
  for (size_t i = 0; i < outer; ++i) {
    shape.numel /= merged[i][0];
    shape.outer.push_back({merged[i][0], {merged[i].begin() + 1, merged[i].end()}});
  }
  shape.ndim = static_cast<int32_t>(merged.size() - outer);
  for (size_t i = 0; i < merged.size() - outer; ++i) {
    const std::vector<int64_t>& dim = merged[merged.size() - 1 - i];
    shape.size[i] = dim[0];
    for (size_t k = 0; k < operands; ++k) shape.strides[k][i] = dim[k + 1];
  }
  return shape;
}

bool all_dense(const WalkShape& shape) {
  if (!shape.outer.empty() || shape.ndim > 1) return false;
  for (const Dims8& strides : shape.strides) {
    if (shape.ndim == 1 && strides[0] != 1) return false;
  }
  return true;
}

GroupShape split_groups(std::span<const int64_t> sizes, const plugin::DimValues<bool>& reduced,
                        const OperandStrides& strides, std::string_view op) {
  std::vector<int64_t> kept_sizes, member_sizes;
  std::vector<std::vector<int64_t>> kept_strides(strides.size()), member_strides(strides.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    (reduced[d] ? member_sizes : kept_sizes).push_back(sizes[d]);
    for (size_t k = 0; k < strides.size(); ++k) {
      (reduced[d] ? member_strides : kept_strides)[k].push_back(strides[k][d]);
    }
  }
  auto walk = [&](const std::vector<int64_t>& part_sizes,
                  const std::vector<std::vector<int64_t>>& part_strides) {
    const OperandStrides views(part_strides.begin(), part_strides.end());
    return collapse(part_sizes, views, op, /*outer_allowed=*/false);
  };
  return {walk(kept_sizes, kept_strides), walk(member_sizes, member_strides)};
}

}  // namespace bp::opencl
