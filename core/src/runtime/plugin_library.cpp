#include "runtime/plugin_library.h"

#include "runtime/elf_truncation.h"
#include "runtime/plugin_rejected.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace bp::detail {
namespace {

// Turns dlopen's message into a reason that says what to do. dlopen names the file it could
// not open: the plugin itself when the plugin is the problem, another library when one of the
// plugin's dependencies is missing.
std::string reason_for_open_failure(const std::filesystem::path& file, std::string_view message) {
  const bool about_the_plugin = message.starts_with(file.string() + ":");
  if (!about_the_plugin && message.find("cannot open shared object file") != message.npos) {
    return fmt::format(
        "a library it depends on is missing: {}. Install that library, or add its folder to "
        "LD_LIBRARY_PATH",
        message);
  }
  if (message.find("undefined symbol") != message.npos) {
    return fmt::format(
        "it needs a symbol that none of its libraries provide: {}. It was probably built "
        "against another version of one of them; rebuild it",
        message);
  }
  return fmt::format(
      "it is not a shared library this process can load: {}. A Backplane plugin is a shared "
      "library for this machine, built with backplane_add_plugin",
      message);
}

// What a file that is neither a folder nor a regular file is, for the message that refuses it.
std::string_view kind_of_special_file(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::fifo: return "a named pipe (FIFO)";
    case std::filesystem::file_type::character: return "a character device";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::socket: return "a socket";
    default: return "a special file";
  }
}

}  // namespace

boost::dll::shared_library open_plugin_library(const std::filesystem::path& file) {
  std::error_code status_error;
  const auto status = std::filesystem::status(file, status_error);
  if (!std::filesystem::exists(status)) {
    throw PluginRejected("the file does not exist");
  }
  if (std::filesystem::is_directory(status)) {
    throw PluginRejected(
        "it is a folder, not a plugin file: name a libbackplane_<backend>.so file, or put the "
        "folder on BACKPLANE_PLUGIN_PATH");
  }
  // dlopen would open it, and opening a pipe waits for a writer, a device may act on being
  // opened: only status, which opens nothing, looks at it.
  if (!std::filesystem::is_regular_file(status)) {
    throw PluginRejected(fmt::format(
        "it is {}, not a plugin file: name a libbackplane_<backend>.so file (a link to one "
        "is fine)",
        kind_of_special_file(status.type())));
  }
  if (std::optional<std::string> truncation = elf_truncation(file)) {
    throw PluginRejected(std::move(*truncation));
  }

  boost::dll::shared_library library;
  boost::dll::fs::error_code error;
  library.load(boost::dll::fs::path(file.string()),
               boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, error);
  if (error) {
    // Boost.DLL leaves dlopen's own message, which names the culprit, for dlerror() to fetch.
    const char* message = dlerror();
    throw PluginRejected(reason_for_open_failure(file, message ? message : error.message()));
  }
  return library;
}

bp_plugin_entry_fn plugin_entry(const boost::dll::shared_library& library) {
  if (!library.has(BP_PLUGIN_ENTRY_SYMBOL)) {
    throw PluginRejected(fmt::format(
        "it does not export {}: is it a Backplane plugin? Build it with backplane_add_plugin",
        BP_PLUGIN_ENTRY_SYMBOL));
  }
  return &library.get<const bp_plugin*(uint32_t, uint32_t)>(BP_PLUGIN_ENTRY_SYMBOL);
}

}  // namespace bp::detail
