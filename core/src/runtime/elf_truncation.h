// Whether a plugin file is whole. dlopen maps an ELF file's segments as its program headers
// describe them, without comparing them with the file's size: a segment cut short by an
// interrupted copy or install is mapped all the same, and the first read of its missing part
// kills the process with SIGBUS. The loader checks the headers against the file first.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace bp::detail {

// Why the file at `path` is an ELF file cut short: its header, program header table, one of
// its segments or its section header table ends past the end of the file. Nothing when it is
// whole, and for a file that is not an ELF file in this machine's byte order (dlopen refuses
// such a file without mapping it, and says why) or that cannot be read.
std::optional<std::string> elf_truncation(const std::filesystem::path& path);

}  // namespace bp::detail
