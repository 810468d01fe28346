#include "runtime/plugin_search.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <algorithm>
#include <system_error>

namespace bp::detail {
namespace {

constexpr std::string_view kPluginPrefix = "libbackplane_";
constexpr std::string_view kPluginSuffix = ".so";

// The plugin files of one folder, sorted so that load order does not depend on the file system.
std::vector<std::filesystem::path> plugin_files_in(const std::filesystem::path& folder,
                                                   std::error_code& error) {
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code ignored;
    if (it->is_regular_file(ignored) && backend_name_from_file_name(it->path())) {
      files.push_back(std::filesystem::absolute(it->path(), ignored));
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void add_folder(const std::filesystem::path& folder, std::string_view origin,
                PluginSearch& search) {
  std::error_code error;
  for (auto& file : plugin_files_in(folder, error)) {
    search.candidates.push_back({std::move(file), false});
  }
  if (error) {
    search.warnings.push_back(
        fmt::format("{} '{}' cannot be read: {}", origin, folder.string(), error.message()));
  }
}

}  // namespace

std::optional<std::string> backend_name_from_file_name(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  if (name.size() <= kPluginPrefix.size() + kPluginSuffix.size() ||
      !name.starts_with(kPluginPrefix) || !name.ends_with(kPluginSuffix)) {
    return std::nullopt;
  }
  return name.substr(kPluginPrefix.size(),
                     name.size() - kPluginPrefix.size() - kPluginSuffix.size());
}

PluginSearch find_plugin_files(const std::vector<std::string>& plugin_path,
                               const std::filesystem::path& default_folder) {
  PluginSearch search;
  for (const std::string& entry : plugin_path) {
    std::error_code error;
    const auto status = std::filesystem::status(entry, error);
    if (std::filesystem::is_directory(status)) {
      add_folder(entry, "BACKPLANE_PLUGIN_PATH entry", search);
    } else if (std::filesystem::exists(status)) {
      search.candidates.push_back({std::filesystem::absolute(entry), true});
    } else {
      search.warnings.push_back(
          fmt::format("BACKPLANE_PLUGIN_PATH entry '{}' does not exist; it is skipped", entry));
    }
  }
  std::error_code error;
  if (std::filesystem::is_directory(default_folder, error)) {
    add_folder(default_folder, "the default plugin folder", search);
  }
  return search;
}

std::filesystem::path default_plugin_folder() {
  Dl_info library{};
  if (dladdr(reinterpret_cast<const void*>(&default_plugin_folder), &library) == 0 ||
      library.dli_fname == nullptr) {
    return {};
  }
  const std::filesystem::path library_path = std::filesystem::absolute(library.dli_fname);
  return library_path.parent_path() / BACKPLANE_PLUGIN_SUBDIR;
}

}  // namespace bp::detail
