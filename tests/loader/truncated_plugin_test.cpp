// A plugin file cut short, as an interrupted copy or install leaves one, is refused before dlopen
// maps it (reading the missing part of a mapped segment would kill the process with SIGBUS), with
// a reason that names the part that ends past the file. The loading runs in child processes, so
// that a regression fails the test instead of killing the suite.
#include "child_process.h"
#include "fixtures.h"
#include "json_reader.h"
#include "runtime/elf_truncation.h"

#include <doctest/doctest.h>

#include <elf.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace fs = std::filesystem;
using bp::detail::elf_truncation;
using loader_test::contains;
using loader_test::fixture_path;
using loader_test::JsonValue;
using loader_test::kChildTimeLimit;
using loader_test::parse_json;
using loader_test::TemporaryFolder;
using test_support::ChildResult;

namespace {

// A copy of `source` at `destination`, cut to its first `size` bytes.
void copy_truncated(const fs::path& source, const fs::path& destination, uint64_t size) {
  fs::copy_file(source, destination);
  fs::resize_file(destination, size);
}

// A size at which `plugin` (a 64-bit ELF file of this machine) ends one byte short of its
// last loadable segment: only segments are cut, whatever lies after them in the file (section
// contents, debug information) and however large that is.
uint64_t size_inside_last_segment(const fs::path& plugin) {
  std::ifstream in(plugin, std::ios::binary);
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  uint64_t last_end = 0;
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff + i * uint64_t{header.e_phentsize}));
    in.read(reinterpret_cast<char*>(&segment), sizeof segment);
    if (segment.p_type == PT_LOAD)
      last_end = std::max(last_end, segment.p_offset + segment.p_filesz);
  }
  REQUIRE(in.good());
  REQUIRE(last_end > header.e_phoff + header.e_phnum * uint64_t{header.e_phentsize});
  return last_end - 1;
}

std::string expected_reason(std::string_view part, uint64_t end, uint64_t file_size) {
  return "it is truncated: " + std::string(part) + " ends at byte " + std::to_string(end) +
         ", but the file has " + std::to_string(file_size) +
         " bytes. An interrupted copy or install leaves such a file: install or copy the plugin "
         "again";
}

// A 32-bit ELF file in this machine's byte order (or the other one) whose one segment claims
// 4096 bytes that the file does not hold.
void write_elf32_with_missing_segment(const fs::path& path, unsigned char byte_order) {
  Elf32_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS32;
  header.e_ident[EI_DATA] = byte_order;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_DYN;
  header.e_ehsize = sizeof(Elf32_Ehdr);
  header.e_phoff = sizeof(Elf32_Ehdr);
  header.e_phentsize = sizeof(Elf32_Phdr);
  header.e_phnum = 1;
  Elf32_Phdr segment{};
  segment.p_type = PT_LOAD;
  segment.p_offset = 0;
  segment.p_filesz = 4096;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&header), sizeof header);
  out.write(reinterpret_cast<const char*>(&segment), sizeof segment);
}

}  // namespace

TEST_CASE("a whole plugin file is not truncated, and a file that is not ELF is left to dlopen") {
  CHECK_FALSE(elf_truncation(fixture_path("fixture")));
  CHECK_FALSE(elf_truncation(fixture_path("garbage")));
}

TEST_CASE("a plugin file cut short is truncated, and the reason names the part past its end") {
  const TemporaryFolder folder;
  const uint64_t whole = fs::file_size(fixture_path("fixture"));
  const struct {
    uint64_t size;
    std::string reason_start;
  } cases[] = {
      {10, expected_reason("its ELF identification", EI_NIDENT, 10)},
      {40, expected_reason("its ELF header", sizeof(Elf64_Ehdr), 40)},
      {sizeof(Elf64_Ehdr) + 1, "it is truncated: its program header table ends at byte "},
      {size_inside_last_segment(fixture_path("fixture")), "it is truncated: segment "},
      {whole - 1, expected_reason("its section header table", whole, whole - 1)},
  };
  for (const auto& [size, reason_start] : cases) {
    CAPTURE(size);
    const fs::path file = folder.path() / ("cut_to_" + std::to_string(size) + ".so");
    copy_truncated(fixture_path("fixture"), file, size);
    const std::optional<std::string> reason = elf_truncation(file);
    REQUIRE(reason);
    CHECK(reason->starts_with(reason_start));
    CHECK(reason->ends_with(", but the file has " + std::to_string(size) +
                            " bytes. An interrupted copy or install leaves such a file: install "
                            "or copy the plugin again"));
  }
}

TEST_CASE(
    "a 32-bit ELF file is checked as well, and one of the other byte order is left to "
    "dlopen") {
  const TemporaryFolder folder;
  const fs::path native = folder.path() / "native.so";
  const bool little_endian = std::endian::native == std::endian::little;
  write_elf32_with_missing_segment(native, little_endian ? ELFDATA2LSB : ELFDATA2MSB);
  CHECK(elf_truncation(native) ==
        expected_reason("segment 0 of 1", 4096, sizeof(Elf32_Ehdr) + sizeof(Elf32_Phdr)));

  const fs::path foreign = folder.path() / "foreign.so";
  write_elf32_with_missing_segment(foreign, little_endian ? ELFDATA2MSB : ELFDATA2LSB);
  CHECK_FALSE(elf_truncation(foreign));
}

TEST_CASE(
    "a truncated plugin in a folder on BACKPLANE_PLUGIN_PATH fails to load, and the "
    "others load") {
  const TemporaryFolder folder;
  const fs::path truncated = folder.path() / "libbackplane_fixture.so";
  copy_truncated(fixture_path("fixture"), truncated,
                 size_inside_last_segment(fixture_path("fixture")));
  fs::copy_file(fixture_path("fixture_thrower"), folder.path() / "libbackplane_fixture_thrower.so");

  const ChildResult result =
      test_support::run_child({BP_INFO_EXECUTABLE, "--json"},
                              {{"BACKPLANE_PLUGIN_PATH", folder.path().string()}}, kChildTimeLimit);
  INFO("stderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  const JsonValue info = parse_json(result.out);
  REQUIRE(info["failures"].array().size() == 1);
  const JsonValue& failure = info["failures"].array()[0];
  CHECK(failure["path"].string() == truncated.string());
  CHECK(failure["reason"].string().starts_with("it is truncated: segment "));
  CHECK(contains(result.err, "[backplane] warn: could not load plugin " + truncated.string() +
                                 ": it is truncated: segment "));
  bool thrower_loaded = false;
  for (const JsonValue& plugin : info["plugins"].array()) {
    thrower_loaded = thrower_loaded || plugin["name"].string() == "fixture_thrower";
  }
  CHECK(thrower_loaded);
}

TEST_CASE("bp::load_plugin of a truncated plugin throws the reason, and the process goes on") {
  const TemporaryFolder folder;
  const fs::path truncated = folder.path() / "libbackplane_fixture.so";
  copy_truncated(fixture_path("fixture"), truncated,
                 size_inside_last_segment(fixture_path("fixture")));

  const ChildResult result = test_support::run_child(
      {LOAD_PROBE_EXECUTABLE, truncated.string(), fixture_path("fixture")}, {}, kChildTimeLimit);
  INFO("stderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.starts_with("failed: could not load plugin " + truncated.string() +
                               ": it is truncated: segment "));
  CHECK(contains(result.out, "\nloaded fixture\nhost works\n"));
}
