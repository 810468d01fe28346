// Checking the descriptor a plugin's entry point returned, before the core calls anything in it.
#pragma once

#include <backplane/abi.h>

namespace bp::detail {

// A copy of `plugin` in which every field past the plugin's struct_size is zero, checked for
// everything the core relies on: a known ABI major version, a backend name, the functions
// every plugin must have, memory functions given all together or not at all, and a DLPack
// device type that is not negative. Throws PluginRejected with the reason otherwise.
bp_plugin accept_descriptor(const bp_plugin* plugin);

}  // namespace bp::detail
