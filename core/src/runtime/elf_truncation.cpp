#include "runtime/elf_truncation.h"

#include <fmt/format.h>

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

namespace bp::detail {
namespace {

constexpr unsigned char kHostByteOrder =
    std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;

class ReadOnlyFile {
 public:
  // O_NONBLOCK: should the file have been replaced by a pipe since it was checked, this open
  // must still not wait for a writer.
  explicit ReadOnlyFile(const std::filesystem::path& path)
      : fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {}
  ~ReadOnlyFile() {
    if (fd_ >= 0) close(fd_);
  }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  bool is_open() const { return fd_ >= 0; }

  std::optional<uint64_t> size() const {
    struct stat status {};
    if (fstat(fd_, &status) != 0) return std::nullopt;
    return static_cast<uint64_t>(status.st_size);
  }

  // Whether all `size` bytes at `offset` could be read into `buffer`.
  bool read(void* buffer, size_t size, uint64_t offset) const {
    size_t done = 0;
    while (done < size) {
      const ssize_t count = pread(fd_, static_cast<char*>(buffer) + done, size - done,
                                  static_cast<off_t>(offset + done));
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) return false;
      done += static_cast<size_t>(count);
    }
    return true;
  }

 private:
  int fd_;
};

// offset + size, or the largest offset there is when that sum does not fit.
uint64_t end_of(uint64_t offset, uint64_t size) {
  uint64_t end = 0;
  return __builtin_add_overflow(offset, size, &end) ? std::numeric_limits<uint64_t>::max() : end;
}

std::string truncated(std::string_view part, uint64_t end, uint64_t file_size) {
  return fmt::format(
      "it is truncated: {} ends at byte {}, but the file has {} bytes. An interrupted copy or "
      "install leaves such a file: install or copy the plugin again",
      part, end, file_size);
}

// The layout check for one ELF class: Header and ProgramHeader are Elf32_* or Elf64_*.
template <typename Header, typename ProgramHeader>
std::optional<std::string> truncated_part(const ReadOnlyFile& file, uint64_t file_size) {
  if (file_size < sizeof(Header)) return truncated("its ELF header", sizeof(Header), file_size);
  Header header{};
  if (!file.read(&header, sizeof header, 0)) return std::nullopt;

  // dlopen refuses program headers of another size before it maps anything.
  if (header.e_phnum > 0 && header.e_phentsize == sizeof(ProgramHeader)) {
    const uint64_t table_end =
        end_of(header.e_phoff, uint64_t{header.e_phnum} * sizeof(ProgramHeader));
    if (table_end > file_size) {
      return truncated("its program header table", table_end, file_size);
    }
    std::vector<ProgramHeader> segments(header.e_phnum);
    if (!file.read(segments.data(), segments.size() * sizeof(ProgramHeader), header.e_phoff)) {
      return std::nullopt;
    }
    for (size_t index = 0; index < segments.size(); ++index) {
      const uint64_t segment_end = end_of(segments[index].p_offset, segments[index].p_filesz);
      if (segment_end > file_size) {
        return truncated(fmt::format("segment {} of {}", index, segments.size()), segment_end,
                         file_size);
      }
    }
  }
  if (header.e_shnum > 0) {
    const uint64_t table_end =
        end_of(header.e_shoff, uint64_t{header.e_shnum} * header.e_shentsize);
    if (table_end > file_size) {
      return truncated("its section header table", table_end, file_size);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> elf_truncation(const std::filesystem::path& path) {
  const ReadOnlyFile file(path);
  if (!file.is_open()) return std::nullopt;
  const std::optional<uint64_t> file_size = file.size();
  if (!file_size) return std::nullopt;

  unsigned char ident[EI_NIDENT] = {};
  if (*file_size < SELFMAG || !file.read(ident, SELFMAG, 0) ||
      std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return std::nullopt;
  }
  if (*file_size < EI_NIDENT) return truncated("its ELF identification", EI_NIDENT, *file_size);
  if (!file.read(ident, EI_NIDENT, 0) || ident[EI_DATA] != kHostByteOrder) return std::nullopt;
  switch (ident[EI_CLASS]) {
    case ELFCLASS64: return truncated_part<Elf64_Ehdr, Elf64_Phdr>(file, *file_size);
    case ELFCLASS32: return truncated_part<Elf32_Ehdr, Elf32_Phdr>(file, *file_size);
    default: return std::nullopt;
  }
}

}  // namespace bp::detail
