// The checks of an optimizer's hyperparameters at construction, where PyTorch makes them, so
// that a bad value is reported where it was given rather than at the first step.
#pragma once

#include <backplane/error.h>

#include <fmt/format.h>

#include <limits>

namespace bp::optim::detail {

// `value` must lie in [low, high); high is infinity for no upper bound.
inline void check_hyperparameter(const char* optimizer, const char* name, double value, double low,
                                 double high = std::numeric_limits<double>::infinity()) {
  if (value >= low && value < high) return;
  if (high == std::numeric_limits<double>::infinity()) {
    throw Error(
        fmt::format("bp::optim::{}: {} must be at least {}, got {}", optimizer, name, low, value));
  }
  throw Error(fmt::format("bp::optim::{}: {} must be in [{}, {}), got {}", optimizer, name, low,
                          high, value));
}

}  // namespace bp::optim::detail
