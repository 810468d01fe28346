// The disk cache on its own: entries round-trip, and a missing, damaged, stale or unwritable
// entry is a miss (or a warning), never an error or a wrong binary.
#include "runtime/program_cache.h"
#include "temporary_folder.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using bp::opencl::ProgramCache;
using test_support::TemporaryFolder;

const std::vector<unsigned char> kBinary = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3, 254, 255};
const std::string kKey =
    "device: test\ndriver version: 1\noptions: -DDTYPE=0\nsource: a.cl 0123 10\n";

struct Warnings {
  std::vector<std::string> messages;
  ProgramCache::Warn sink() {
    return [this](const std::string& message) { messages.push_back(message); };
  }
};

void overwrite_byte(const std::filesystem::path& file, std::streamoff at_from_end) {
  std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
  stream.seekg(-at_from_end, std::ios::end);
  char byte = 0;
  stream.read(&byte, 1);
  stream.seekp(-at_from_end, std::ios::end);
  byte = static_cast<char>(byte ^ 0x5a);
  stream.write(&byte, 1);
}

}  // namespace

TEST_CASE("program cache: a stored binary loads back under its key (warm)") {
  TemporaryFolder folder;
  ProgramCache cache(folder.path() / "nested" / "cache");
  cache.store(kKey, kBinary);
  CHECK(std::filesystem::exists(cache.entry_path(kKey)));
  const auto loaded = cache.load(kKey);
  REQUIRE(loaded.has_value());
  CHECK(*loaded == kBinary);
  // Another cache object on the same folder (a later process) finds it too.
  CHECK(ProgramCache(folder.path() / "nested" / "cache").load(kKey) == kBinary);
}

TEST_CASE("program cache: a key never stored is a miss (cold)") {
  TemporaryFolder folder;
  ProgramCache cache(folder.path());
  CHECK_FALSE(cache.load(kKey).has_value());
  cache.store(kKey, kBinary);
  CHECK_FALSE(cache.load(kKey + "other options").has_value());
}

TEST_CASE("program cache: a corrupted entry is a miss and storing again repairs it") {
  TemporaryFolder folder;
  ProgramCache cache(folder.path());
  const std::filesystem::path entry = cache.entry_path(kKey);

  SUBCASE("a payload byte flipped") {
    cache.store(kKey, kBinary);
    overwrite_byte(entry, 3);
    CHECK_FALSE(cache.load(kKey).has_value());
  }
  SUBCASE("truncated") {
    cache.store(kKey, kBinary);
    std::filesystem::resize_file(entry, std::filesystem::file_size(entry) - 4);
    CHECK_FALSE(cache.load(kKey).has_value());
  }
  SUBCASE("extended") {
    cache.store(kKey, kBinary);
    std::ofstream(entry, std::ios::app | std::ios::binary) << "junk";
    CHECK_FALSE(cache.load(kKey).has_value());
  }
  SUBCASE("not an entry at all") {
    std::ofstream(entry, std::ios::binary) << "hello";
    CHECK_FALSE(cache.load(kKey).has_value());
  }
  SUBCASE("empty") {
    std::ofstream(entry, std::ios::binary).close();
    CHECK_FALSE(cache.load(kKey).has_value());
  }
  cache.store(kKey, kBinary);
  CHECK(cache.load(kKey) == kBinary);
}

TEST_CASE(
    "program cache: an entry filed under another key is a miss (a stale entry or a hash "
    "collision)") {
  TemporaryFolder folder;
  ProgramCache cache(folder.path());
  const std::string old_key = "device: test\ndriver version: 0\n";
  cache.store(old_key, kBinary);
  std::filesystem::copy_file(cache.entry_path(old_key), cache.entry_path(kKey));
  CHECK_FALSE(cache.load(kKey).has_value());
}

TEST_CASE("program cache: a folder that cannot be written warns once and fails nothing") {
  TemporaryFolder folder;
  // A file where the folder should be: creating it fails, even for root.
  const std::filesystem::path blocker = folder.path() / "not-a-folder";
  std::ofstream(blocker) << "x";
  Warnings warnings;
  ProgramCache cache(blocker / "cache", warnings.sink());
  cache.store(kKey, kBinary);
  cache.store(kKey + "2", kBinary);
  CHECK_FALSE(cache.load(kKey).has_value());
  REQUIRE(warnings.messages.size() == 1);
  CHECK(warnings.messages[0].find((blocker / "cache").string()) != std::string::npos);
  CHECK(warnings.messages[0].find("BACKPLANE_OPENCL_CACHE_DIR") != std::string::npos);
}

TEST_CASE("program cache: a read-only folder warns once and fails nothing") {
  if (geteuid() == 0) {
    MESSAGE("skipped: permissions do not stop root (the folder blocked by a file covers this)");
    return;
  }
  TemporaryFolder folder;
  std::filesystem::permissions(folder.path(), std::filesystem::perms::owner_read |
                                                  std::filesystem::perms::owner_exec);
  Warnings warnings;
  ProgramCache cache(folder.path(), warnings.sink());
  cache.store(kKey, kBinary);
  cache.store(kKey + "2", kBinary);
  std::filesystem::permissions(folder.path(), std::filesystem::perms::owner_all);
  CHECK_FALSE(cache.load(kKey).has_value());
  CHECK(warnings.messages.size() == 1);
}

TEST_CASE("program cache: an empty folder turns the cache off") {
  ProgramCache cache{std::filesystem::path()};
  CHECK_FALSE(cache.enabled());
  cache.store(kKey, kBinary);
  CHECK_FALSE(cache.load(kKey).has_value());
}

TEST_CASE(
    "program cache: the default folder follows BACKPLANE_OPENCL_CACHE_DIR then XDG_CACHE_HOME then "
    "HOME") {
  struct Saved {
    std::string name;
    std::optional<std::string> value;
  };
  std::vector<Saved> saved;
  for (const char* name : {"BACKPLANE_OPENCL_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
    const char* value = std::getenv(name);
    saved.push_back({name, value ? std::optional<std::string>(value) : std::nullopt});
  }
  setenv("HOME", "/home/someone", 1);
  unsetenv("XDG_CACHE_HOME");
  unsetenv("BACKPLANE_OPENCL_CACHE_DIR");
  CHECK(ProgramCache::default_folder() == "/home/someone/.cache/backplane/opencl");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  CHECK(ProgramCache::default_folder() == "/xdg/backplane/opencl");
  setenv("BACKPLANE_OPENCL_CACHE_DIR", "/explicit", 1);
  CHECK(ProgramCache::default_folder() == "/explicit");
  setenv("BACKPLANE_OPENCL_CACHE_DIR", "", 1);
  CHECK(ProgramCache::default_folder().empty());

  for (const Saved& s : saved) {
    if (s.value) {
      setenv(s.name.c_str(), s.value->c_str(), 1);
    } else {
      unsetenv(s.name.c_str());
    }
  }
}
