#include "sample_builder.h"

namespace bp::conformance {

std::span<const OpInfo> op_infos() {
  static const std::vector<OpInfo> infos = [] {
    std::vector<OpInfo> all;
    for (auto family : {elementwise_op_infos, reduction_op_infos, normalization_op_infos,
                        spatial_op_infos, linalg_op_infos, indexing_op_infos, training_op_infos}) {
      for (const OpInfo& info : family()) all.push_back(info);
    }
    return all;
  }();
  return infos;
}

const OpInfo* find_op_info(std::string_view kernel_op) {
  for (const OpInfo& info : op_infos()) {
    if (info.kernel_op == kernel_op) return &info;
  }
  return nullptr;
}

}  // namespace bp::conformance
