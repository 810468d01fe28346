#include "digits.h"

#include <zlib.h>

#include <charconv>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string_view>

namespace digits {
namespace {

// The whole of a gzip file, decompressed.
std::string read_gzip(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error(
        "the digits data set is not at " + path +
        "; it comes with Debian's python3-sklearn package (apt-get install "
        "python3-sklearn, or scripts/install-deps.sh), or pass --data with its path");
  }
  const std::unique_ptr<gzFile_s, decltype(&gzclose)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::string text;
  char chunk[1 << 16];
  int count;
  while ((count = gzread(file.get(), chunk, sizeof chunk)) > 0) text.append(chunk, count);
  if (count < 0) {
    int code;
    throw std::runtime_error(path + " is not a readable gzip file: " + gzerror(file.get(), &code));
  }
  return text;
}

// One line's 65 numbers, checked, appended to `data`.
void parse_line(std::string_view line, int64_t line_number, const std::string& path,
                DataSet& data) {
  const auto fail = [&](const std::string& what) {
    throw std::runtime_error(path + ":" + std::to_string(line_number) + ": " + what);
  };
  const char* cursor = line.data();
  const char* end = line.data() + line.size();
  for (int64_t column = 0; column <= kPixels; ++column) {
    int value = 0;
    const auto [next, error] = std::from_chars(cursor, end, value);
    if (error != std::errc()) fail("expected a number in column " + std::to_string(column + 1));
    const bool is_label = column == kPixels;
    const int limit = is_label ? static_cast<int>(kClasses) - 1 : 16;
    if (value < 0 || value > limit) {
      fail(std::string(is_label ? "a label" : "a pixel value") + " must be in 0.." +
           std::to_string(limit) + ", got " + std::to_string(value));
    }
    if (is_label) {
      data.labels.push_back(value);
    } else {
      data.pixels.push_back(static_cast<float>(value) / 16.0f);
    }
    cursor = next;
    const bool last = column == kPixels;
    if (!last && (cursor == end || *cursor != ',')) {
      fail("expected " + std::to_string(kPixels + 1) + " comma-separated numbers, got " +
           std::to_string(column + 1));
    }
    if (!last) ++cursor;
  }
  if (cursor != end) fail("more than " + std::to_string(kPixels + 1) + " numbers");
}

}  // namespace

DataSet load(const std::string& path) {
  const std::string text = read_gzip(path);
  DataSet data;
  int64_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t stop = text.find('\n', start);
    if (stop == std::string::npos) stop = text.size();
    std::string_view line(text.data() + start, stop - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_number;
    if (!line.empty()) parse_line(line, line_number, path, data);
    start = stop + 1;
  }
  if (data.size() == 0) throw std::runtime_error(path + " holds no images");
  return data;
}

}  // namespace digits
