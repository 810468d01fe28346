// Comparing one output of a case with the reference's, element by element, with the op's
// tolerance for the output's dtype.
#pragma once

#include <backplane/conformance/kernel_op_table.h>
#include <backplane/conformance/runner.h>

#include <optional>
#include <string_view>

namespace bp::conformance {

// The reference may be wider (Float64): its values are rounded to `actual`'s dtype first. The
// failure's case_name is left empty for the caller; nothing when every element conforms.
std::optional<CaseFailure> compare_output(const KernelOp& op, std::string_view output_name,
                                          const Tensor& actual, const Tensor& expected);

}  // namespace bp::conformance
