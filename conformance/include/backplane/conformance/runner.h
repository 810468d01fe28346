// Runs a kernel op's conformance cases on one device: each sample input (op_info.h) of each
// dtype, with its tensors laid out contiguous, transposed, sliced and expanded, through the
// op's functional, out= and in-place forms, compared with the host reference. The reference is
// the CPU backend running the same op on contiguous host copies of the same inputs, in Float64
// where the op takes it (so that a kernel wrong in one dtype, or for one layout, departs from
// it), with the tolerances of <backplane/sdk/tolerance.hpp>.
#pragma once

#include <backplane/conformance/kernel_op_table.h>

#include <optional>
#include <string>
#include <vector>

namespace bp::conformance {

struct RunOptions {
  std::vector<DType> dtypes;  // empty: every dtype the op declares
  size_t max_failures = 5;    // failures kept per op (all are counted)
};

struct CaseFailure {
  // "Float32, [3, 5], transposed, add.Tensor"
  std::string case_name;
  // "out: element 7 is 3.5 where the reference gives 2.5 (error 1, tolerance 2.5e-05)"
  std::string error;
  // How far past its tolerance the worst element is (error / tolerance; infinite for a wrong
  // shape, an exception or a NaN), to pick the worst case.
  double severity = 0;
};

enum class OpStatus {
  Pass,         // every case ran and conformed
  Fail,         // a case departed from the reference or raised an error
  Unsupported,  // the backend does not list the op, or refused every case as unimplemented
};
std::string_view name_of(OpStatus status);

struct OpResult {
  std::string op;
  OpStatus status = OpStatus::Pass;
  int64_t cases = 0;        // cases run (each dtype, sample, layout and form)
  int64_t failed = 0;       // of those, how many departed or raised
  int64_t unsupported = 0;  // of those, how many the backend refused as unimplemented
  std::vector<std::string> unsupported_dtypes;  // dtypes whose every case was refused
  std::optional<CaseFailure> worst;
  std::vector<CaseFailure> failures;  // the first RunOptions::max_failures
  std::string note;                   // why the op is unsupported
  double seconds = 0;
};

// Runs every case of `op` on `device`. The CPU backend must be loaded (it is the reference).
// Throws bp::Error when ops.yaml's op has no sample generator (a bug in this library).
OpResult run_op(const KernelOp& op, Device device, const RunOptions& options = {});

}  // namespace bp::conformance
