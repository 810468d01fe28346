// Writing a run's outputs all at once: every file goes to a temporary name next to its target
// and is renamed into place only when all of them were written, so a failed run leaves no
// partial output. A file whose content is unchanged is left alone, keeping its timestamp so
// that nothing downstream rebuilds.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace bp::codegen {

struct GeneratedFile {
  std::filesystem::path path;
  std::string content;
};

struct WriteSummary {
  int written = 0;
  int unchanged = 0;
};

// Throws CodegenError (naming the file) when a directory or file cannot be written; the
// temporary files of the run are removed then.
WriteSummary write_files(const std::vector<GeneratedFile>& files);

}  // namespace bp::codegen
