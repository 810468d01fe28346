// The dtypes the core's meta step promises a kernel: the inputs converted to one dtype, and for
// sum and mean an input that widens exactly to the output's. A mismatch is a bug on the core's
// side, or a plugin built for another contract; checking keeps a kernel from reading elements
// of the wrong size (BP_STATUS_INVALID_ARGUMENT).
#pragma once

#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/status.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <initializer_list>
#include <string>
#include <string_view>

namespace bp::plugin {

// `view` holds `expected`.
inline void require_dtype(std::string_view op, std::string_view argument, const TensorView& view,
                          DType expected) {
  if (view.dtype() == expected) return;
  throw Error(BP_STATUS_INVALID_ARGUMENT, std::string(op) + ": expected " + std::string(argument) +
                                              " of dtype " + std::string(dtype_name(expected)) +
                                              ", got " + std::string(dtype_name(view.dtype())));
}

// A tensor argument by name; `view` is null for an optional argument the caller left out.
struct NamedView {
  std::string_view name;
  const TensorView* view;
};

// Every present view of `views` holds `expected`, as require_dtype checks one.
inline void require_dtypes(std::string_view op, std::initializer_list<NamedView> views,
                           DType expected) {
  for (const NamedView& named : views) {
    if (named.view != nullptr) require_dtype(op, named.name, *named.view, expected);
  }
}

// `view` holds `expected` or a dtype that widens exactly to it (widens_exactly in dtype.hpp).
inline void require_widening_dtype(std::string_view op, std::string_view argument,
                                   const TensorView& view, DType expected) {
  if (widens_exactly(view.dtype(), expected)) return;
  throw Error(BP_STATUS_INVALID_ARGUMENT, std::string(op) + ": expected " + std::string(argument) +
                                              " of dtype " + std::string(dtype_name(expected)) +
                                              " or one that widens exactly to it, got " +
                                              std::string(dtype_name(view.dtype())));
}

}  // namespace bp::plugin
