#include "runtime/program_cache.h"

#include <backplane/sdk/log.hpp>

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

namespace bp::opencl {
namespace {

constexpr std::array<char, 8> kMagic = {'B', 'P', 'O', 'C', 'L', 'B', 'I', 'N'};
// Bump when the file layout changes; older files then read as stale.
constexpr uint32_t kFormatVersion = 1;

// The fixed-size start of an entry file, in host byte order (the cache never leaves the host).
struct Header {
  std::array<char, 8> magic;
  uint32_t format_version;
  uint32_t key_length;
  uint64_t payload_length;
  uint64_t payload_checksum;
};
static_assert(sizeof(Header) == 32);

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::filesystem::path from_environment(const char* variable, const char* suffix) {
  const char* value = secure_getenv(variable);
  if (value == nullptr || *value == '\0') return {};
  return std::filesystem::path(value) / suffix;
}

}  // namespace

uint64_t fnv1a_64(std::span<const unsigned char> bytes) {
  uint64_t hash = kFnvOffset;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= kFnvPrime;
  }
  return hash;
}

uint64_t fnv1a_64(std::string_view text) {
  return fnv1a_64({reinterpret_cast<const unsigned char*>(text.data()), text.size()});
}

ProgramCache::ProgramCache(std::filesystem::path folder, Warn warn)
    : folder_(std::move(folder)), warn_(std::move(warn)) {
  if (!warn_) warn_ = [](const std::string& message) { plugin::warn(message); };
}

std::filesystem::path ProgramCache::default_folder() {
  if (const char* folder = secure_getenv("BACKPLANE_OPENCL_CACHE_DIR")) return folder;
  std::filesystem::path folder = from_environment("XDG_CACHE_HOME", "backplane/opencl");
  if (folder.empty()) folder = from_environment("HOME", ".cache/backplane/opencl");
  return folder;
}

std::filesystem::path ProgramCache::entry_path(std::string_view key) const {
  return folder_ / (hex(fnv1a_64(key)) + ".clbin");
}

std::optional<std::vector<unsigned char>> ProgramCache::load(std::string_view key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream file(entry_path(key), std::ios::binary);
  if (!file) return std::nullopt;
  Header header{};
  if (!file.read(reinterpret_cast<char*>(&header), sizeof header)) return std::nullopt;
  if (header.magic != kMagic || header.format_version != kFormatVersion ||
      header.key_length != key.size()) {
    return std::nullopt;
  }
  std::string stored_key(header.key_length, '\0');
  if (!file.read(stored_key.data(), static_cast<std::streamsize>(stored_key.size())) ||
      stored_key != key) {
    return std::nullopt;
  }
  // Reading up to the end, rather than trusting payload_length for the allocation, keeps a
  // corrupted length from asking for absurd memory.
  std::vector<unsigned char> payload{std::istreambuf_iterator<char>(file),
                                     std::istreambuf_iterator<char>()};
  if (payload.size() != header.payload_length || fnv1a_64(payload) != header.payload_checksum) {
    return std::nullopt;
  }
  return payload;
}

void ProgramCache::store(std::string_view key, std::span<const unsigned char> binary) {
  if (!enabled()) return;
  std::error_code error;
  std::filesystem::create_directories(folder_, error);
  if (error) {
    warn_once("cannot create the folder: " + error.message());
    return;
  }
  Header header{};
  header.magic = kMagic;
  header.format_version = kFormatVersion;
  header.key_length = static_cast<uint32_t>(key.size());
  header.payload_length = binary.size();
  header.payload_checksum = fnv1a_64(binary);

  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path target = entry_path(key);
  std::filesystem::path temporary = target;
  temporary += ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(&header), sizeof header);
    file.write(key.data(), static_cast<std::streamsize>(key.size()));
    file.write(reinterpret_cast<const char*>(binary.data()),
               static_cast<std::streamsize>(binary.size()));
    file.close();
    if (!file) {
      std::filesystem::remove(temporary, error);
      warn_once("cannot write " + temporary.string() + ": " + std::strerror(errno));
      return;
    }
  }
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    warn_once("cannot write " + target.string() + ": " + error.message());
  }
}

void ProgramCache::remove(std::string_view key) {
  if (!enabled()) return;
  std::error_code ignored;  // nothing to do about an entry that cannot be removed
  std::filesystem::remove(entry_path(key), ignored);
}

void ProgramCache::warn_once(const std::string& message) {
  if (warned_.exchange(true)) return;
  warn_("the program cache in " + folder_.string() + " does not work (" + message +
        "); kernels will be compiled again in every process. Set BACKPLANE_OPENCL_CACHE_DIR "
        "to a writable folder, or to nothing to turn the cache off.");
}

}  // namespace bp::opencl
