// Opening a plugin file and finding its entry point, with a message for each way it fails.
#pragma once

#include <backplane/abi.h>

#include <boost/dll/shared_library.hpp>

#include <filesystem>

namespace bp::detail {

// dlopen with RTLD_NOW, so that a missing symbol fails here with a message rather than later
// as a crash, and RTLD_LOCAL, so that two plugins' symbols never mix. A file that is not a
// regular file, or an ELF file cut short, never reaches dlopen. Throws PluginRejected.
boost::dll::shared_library open_plugin_library(const std::filesystem::path& file);

// The exported backplane_plugin_entry. Throws PluginRejected when the file has none.
bp_plugin_entry_fn plugin_entry(const boost::dll::shared_library& library);

}  // namespace bp::detail
