#include "file_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <system_error>

#include "diagnostics.h"

namespace bp::codegen {

namespace {

bool has_content(const std::filesystem::path& path, const std::string& content) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  if (std::filesystem::file_size(path, ec) != content.size() || ec) return false;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str() == content;
}

void remove_quietly(const std::vector<std::filesystem::path>& paths) {
  for (const auto& p : paths) {
    std::error_code ignored;
    std::filesystem::remove(p, ignored);
  }
}

}  // namespace

WriteSummary write_files(const std::vector<GeneratedFile>& files) {
  WriteSummary summary;
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> renames;  // temp, target
  std::vector<std::filesystem::path> temporaries;
  try {
    for (const GeneratedFile& file : files) {
      if (has_content(file.path, file.content)) {
        ++summary.unchanged;
        continue;
      }
      std::error_code ec;
      if (file.path.has_parent_path())
        std::filesystem::create_directories(file.path.parent_path(), ec);
      if (ec) {
        throw CodegenError({file.path.parent_path().string(), 0, 0},
                           fmt::format("cannot create the directory: {}", ec.message()));
      }
      // The process id keeps concurrent runs (parallel build steps) from sharing a name.
      std::filesystem::path temporary = file.path;
      temporary += fmt::format(".tmp{}", ::getpid());
      temporaries.push_back(temporary);
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out << file.content;
      out.close();
      if (!out) throw CodegenError({temporary.string(), 0, 0}, "cannot write the file");
      renames.emplace_back(temporary, file.path);
    }
    // Renaming cannot be undone, so everything that could make a rename fail is checked first.
    for (const auto& [temporary, target] : renames) {
      std::error_code ec;
      if (std::filesystem::exists(target, ec) && !std::filesystem::is_regular_file(target, ec)) {
        throw CodegenError({target.string(), 0, 0}, "exists and is not a regular file");
      }
    }
    for (const auto& [temporary, target] : renames) {
      std::error_code ec;
      std::filesystem::rename(temporary, target, ec);
      if (ec) {
        throw CodegenError(
            {target.string(), 0, 0},
            fmt::format("cannot rename the generated file into place: {}", ec.message()));
      }
      ++summary.written;
    }
  } catch (...) {
    remove_quietly(temporaries);
    throw;
  }
  return summary;
}

}  // namespace bp::codegen
