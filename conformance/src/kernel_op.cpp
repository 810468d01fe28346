#include <backplane/conformance/kernel_op_table.h>

namespace bp::conformance {

size_t KernelOp::parameter_index(std::string_view name) const {
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].name == name) return i;
  }
  return parameters.size();
}

const KernelOp* find_kernel_op(std::string_view name) {
  for (const KernelOp& op : kernel_op_table()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace bp::conformance
