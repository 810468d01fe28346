// The handwritten digits data set that Debian's python3-sklearn ships: 1797 images of 8x8
// pixels with values 0..16, each labelled with its digit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace digits {

inline constexpr const char* kDefaultPath =
    "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
inline constexpr int64_t kSide = 8;
inline constexpr int64_t kPixels = kSide * kSide;
inline constexpr int64_t kClasses = 10;

struct DataSet {
  std::vector<float> pixels;    // kPixels per image, row by row, scaled to [0, 1]
  std::vector<int64_t> labels;  // 0..9, one per image
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

// Reads the gzip-compressed CSV at `path` (one image per line: 64 pixel values, then the
// label). Throws std::runtime_error saying what is wrong: a missing file names the package
// that installs it, a malformed line its number.
DataSet load(const std::string& path);

}  // namespace digits
