// Checking a plugin's kernel table against the core's ops: a kernel whose op the core does not
// know, or whose schema hash differs from the core's, is refused alone; the others install.
#pragma once

#include <backplane/abi.h>
#include <backplane/runtime.h>
#include <core_generated/OpTable.h>

#include "dispatch/dispatch.h"

#include <vector>

namespace bp::detail {

struct KernelReview {
  std::vector<AcceptedKernel> accepted;  // in ops.yaml order
  std::vector<RefusedKernel> refused;    // in the plugin's order
};

// `plugin` is a descriptor accept_descriptor() returned, so its kernel table is well formed.
KernelReview review_kernels(const bp_plugin& plugin);

}  // namespace bp::detail
