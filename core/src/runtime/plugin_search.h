// Where plugins are looked for: the entries of BACKPLANE_PLUGIN_PATH in order, then the
// default folder next to libbackplane. Never the working directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bp::detail {

struct PluginCandidate {
  std::filesystem::path path;
  // A file named by BACKPLANE_PLUGIN_PATH loads whatever its name is; a file found in a
  // folder is a plugin only when named libbackplane_<backend>.so.
  bool named_explicitly = false;
};

struct PluginSearch {
  std::vector<PluginCandidate> candidates;  // in load order, each folder's files sorted by name
  std::vector<std::string> warnings;        // path entries that do not exist or cannot be read
};

PluginSearch find_plugin_files(const std::vector<std::string>& plugin_path,
                               const std::filesystem::path& default_folder);

// <folder of libbackplane.so>/BACKPLANE_PLUGIN_SUBDIR, so that an installed prefix and the
// build tree both find their own plugins wherever the process runs.
std::filesystem::path default_plugin_folder();

// "cpu" for libbackplane_cpu.so: the backend a folder's file promises by its name, so that a
// backend left out by BACKPLANE_BACKENDS is never opened (its missing driver cannot matter).
std::optional<std::string> backend_name_from_file_name(const std::filesystem::path& file);

}  // namespace bp::detail
