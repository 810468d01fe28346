// Loading one opened plugin library, in the two halves the registry puts its own checks
// between: read_descriptor learns what the plugin is, running none of its code but the entry
// point; start_plugin initializes it and learns its devices and kernels.
#pragma once

#include "runtime/kernel_review.h"
#include "runtime/backend.h"

#include <boost/dll/shared_library.hpp>

#include <filesystem>
#include <memory>
#include <vector>

namespace bp::detail {

// The descriptor as accept_descriptor() returns it. Throws PluginRejected with the reason the
// library is not a plugin this core can use.
bp_plugin read_descriptor(const boost::dll::shared_library& library);

struct StartedPlugin {
  std::unique_ptr<Backend> backend;
  std::vector<AcceptedKernel> kernels;  // for the dispatch table
};

// Hands the plugin `core_services` (ABI 1.3) and calls its init, then enumerates its devices and
// reviews its kernels. Throws PluginRejected when init fails.
StartedPlugin start_plugin(const bp_plugin& plugin, const std::filesystem::path& file,
                           int16_t device_type, const bp_core_services* core_services);

}  // namespace bp::detail
