#include "case_comparison.h"

#include <backplane/conformance/samples.h>
#include <backplane/sdk/tolerance.hpp>

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace bp::conformance {

// The worst element of `actual` against `expected`, or nothing when all conform.
std::optional<CaseFailure> compare_output(const KernelOp& op, std::string_view output_name,
                                          const Tensor& actual, const Tensor& expected) {
  if (actual.defined() != expected.defined()) {
    return CaseFailure{{},
                       fmt::format("{}: {} where the reference gives {}", output_name,
                                   actual.defined() ? "a tensor" : "no tensor",
                                   expected.defined() ? "one" : "none"),
                       std::numeric_limits<double>::infinity()};
  }
  if (!actual.defined()) return std::nullopt;
  if (actual.sizes().vec() != expected.sizes().vec()) {
    return CaseFailure{{},
                       fmt::format("{}: shape {} where the reference gives {}", output_name,
                                   shape_string(actual.sizes().vec()),
                                   shape_string(expected.sizes().vec())),
                       std::numeric_limits<double>::infinity()};
  }
  const DType dtype = actual.dtype();
  const plugin::Tolerance tolerance = plugin::conformance_tolerance(op.name, dtype);
  const Values got = values_of(actual);
  const Values want = values_of(expected);
  double worst = 0;
  size_t worst_index = 0;
  int64_t departing = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double reference = stored_as(dtype, want[i]);
    if (plugin::within_tolerance(got[i], reference, tolerance)) continue;
    ++departing;
    const double bound = tolerance.absolute + tolerance.relative * std::fabs(reference);
    const double error = std::fabs(got[i] - reference);
    const double severity =
        std::isfinite(error) && bound > 0 ? error / bound : std::numeric_limits<double>::infinity();
    if (departing == 1 || severity > worst) {
      worst = severity;
      worst_index = i;
    }
  }
  if (departing == 0) return std::nullopt;
  const double reference = stored_as(dtype, want[worst_index]);
  return CaseFailure{
      {},
      fmt::format("{}: {} of {} elements depart; the worst, element {}, is {} where the "
                  "reference gives {} (error {:.3g}, tolerance {:.3g} + {:.3g} * |reference|)",
                  output_name, departing, got.size(), worst_index, got[worst_index], reference,
                  std::fabs(got[worst_index] - reference), tolerance.absolute, tolerance.relative),
      worst};
}

}  // namespace bp::conformance
