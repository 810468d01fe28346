// A folder of compiled program binaries that outlives the process, so that a later process
// runs its first kernel without compiling. It knows nothing of OpenCL: a binary is bytes filed
// under a key string that names everything the binary depends on (device, driver, build
// options, source hash); the program builder makes the keys.
//
// One file per key, named by the key's hash. A file holds a header (magic, format version, key
// length, payload length, payload checksum), the key itself and the payload. Loading checks all
// of it, so a truncated, corrupted or stale file (another key with the same hash, an older
// format) reads as absent and is rebuilt and overwritten. Files are written to a temporary name
// and renamed into place, so that concurrent processes see an old entry or a new one, never a
// half-written one. A folder that cannot be created or written is reported once, through
// `warn`, and the cache then does nothing: compiling in every process is slower, not wrong.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::opencl {

// 64-bit FNV-1a: names cache files and checks their payloads (corruption, not attacks).
uint64_t fnv1a_64(std::span<const unsigned char> bytes);
uint64_t fnv1a_64(std::string_view text);

class ProgramCache {
 public:
  using Warn = std::function<void(const std::string& message)>;

  // An empty `folder` disables the cache. Without `warn`, warnings go to bp::plugin::warn.
  explicit ProgramCache(std::filesystem::path folder, Warn warn = {});

  // The folder BACKPLANE_OPENCL_CACHE_DIR names (set but empty: no cache), else
  // $XDG_CACHE_HOME/backplane/opencl, else $HOME/.cache/backplane/opencl; empty if none is set.
  static std::filesystem::path default_folder();

  bool enabled() const { return !folder_.empty(); }
  const std::filesystem::path& folder() const { return folder_; }
  std::filesystem::path entry_path(std::string_view key) const;

  // The binary filed under `key`, or nullopt if there is none or its file is damaged.
  std::optional<std::vector<unsigned char>> load(std::string_view key) const;
  // Files `binary` under `key`, replacing any entry. Never throws; a failure warns once.
  void store(std::string_view key, std::span<const unsigned char> binary);
  // Drops the entry of `key` (a binary the driver refused to load).
  void remove(std::string_view key);

 private:
  void warn_once(const std::string& message);

  std::filesystem::path folder_;
  Warn warn_;
  std::atomic<bool> warned_{false};
};

}  // namespace bp::opencl
