// What the distributed suites' ranks pass: values that depend on the rank and the position,
// small integers that every dtype holds exactly and whose sums and means (over 2 or 4 ranks)
// are exact too, so that results compare with ==.
#pragma once

#include <backplane/backplane.h>

#include <vector>

namespace testsupport {

inline std::vector<double> rank_values(int rank, int64_t count, bp::DType dtype) {
  std::vector<double> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t cycle = (rank * 7 + i * 3) % 11;
    values[static_cast<size_t>(i)] = dtype == bp::kBool    ? static_cast<double>(cycle % 3 == 0)
                                     : dtype == bp::kUInt8 ? static_cast<double>(cycle)
                                                           : static_cast<double>(cycle - 5);
  }
  return values;
}

inline bp::Tensor tensor_of(const std::vector<double>& values, bp::IntArrayRef sizes,
                            bp::DType dtype, bp::Device device) {
  // Converted on the host, so that a device with no kernels of its own (a fixture) can hold it.
  return bp::from_vector(values, sizes).to(dtype).to(device);
}

inline std::vector<double> values_of(const bp::Tensor& tensor) {
  return tensor.cpu().to(bp::kFloat64).contiguous().to_vector<double>();
}

// The host, and the first device of each other loaded device type.
inline std::vector<bp::Device> devices_to_test() {
  std::vector<bp::Device> chosen;
  for (const bp::Device& device : bp::devices()) {
    const bool type_seen = std::any_of(chosen.begin(), chosen.end(), [&](const bp::Device& d) {
      return d.type() == device.type();
    });
    if (!type_seen) chosen.push_back(device);
  }
  return chosen;
}

}  // namespace testsupport
