#include "op_test_support.h"

#include <backplane/sdk/dispatch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

namespace optest {

std::vector<DType> all_dtypes() { return {std::begin(bp::kAllDTypes), std::end(bp::kAllDTypes)}; }

std::vector<DType> floating_dtypes() {
  return {bp::kFloat32, bp::kFloat64, bp::kFloat16, bp::kBFloat16};
}

std::vector<DType> non_bool_dtypes() {
  std::vector<DType> dtypes = all_dtypes();
  std::erase(dtypes, bp::kBool);
  return dtypes;
}

std::string name_of(DType dtype) { return std::string(bp::dtype_name(dtype)); }

DType floating_result(DType dtype) { return bp::is_floating_point(dtype) ? dtype : bp::kFloat32; }

Shape shape_of(const Tensor& t) { return t.sizes().vec(); }

namespace {

struct Tolerance {
  double relative;
  double absolute;  // for results near 0, where a relative bound means nothing
};

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case bp::kFloat32: return {1e-5, 1e-6};
    case bp::kFloat64: return {1e-12, 1e-12};
    case bp::kFloat16:
    case bp::kBFloat16: return {1e-2, 1e-3};
    default: return {0, 0};
  }
}

bool close(double actual, double expected, Tolerance tolerance) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isinf(expected)) return actual == expected;
  return std::abs(actual - expected) <=
         tolerance.absolute + tolerance.relative * std::abs(expected);
}

}  // namespace

void check_tensor(const Tensor& actual, const Shape& sizes, DType dtype, const Values& expected,
                  double extra_absolute) {
  check_tensor(actual, sizes, dtype, expected, Values(expected.size(), extra_absolute));
}

double unit_in_last_place(DType dtype, double value) {
  if (value == 0) return 0;  // zero rounds exactly
  int exponent = 0;
  std::frexp(value, &exponent);  // |value| in [2^(exponent - 1), 2^exponent)
  const int stored_fraction_bits = dtype == bp::kBFloat16  ? 7
                                   : dtype == bp::kFloat16 ? 10
                                   : dtype == bp::kFloat32 ? 23
                                                           : 52;
  return std::ldexp(1.0, exponent - 1 - stored_fraction_bits);
}

double cancellation_tolerance(DType dtype, double magnitude) {
  return 8 * unit_in_last_place(dtype, magnitude);
}

void check_tensor(const Tensor& actual, const Shape& sizes, DType dtype, const Values& expected,
                  const Values& extra_absolute) {
  REQUIRE(actual.defined());
  const Shape actual_shape = shape_of(actual);
  CHECK_MESSAGE(actual_shape == sizes,
                "shape " << shape_string(actual_shape) << ", expected " << shape_string(sizes));
  CHECK_MESSAGE(actual.dtype() == dtype,
                "dtype " << name_of(actual.dtype()) << ", expected " << name_of(dtype));
  REQUIRE_MESSAGE(static_cast<size_t>(numel_of(sizes)) == expected.size(),
                  "the test's expected values do not fill " << shape_string(sizes));
  if (actual_shape != sizes || actual.dtype() != dtype) return;

  const Values values = values_of(actual);
  REQUIRE(extra_absolute.size() == expected.size());
  const Tolerance dtype_tolerance = tolerance_for(dtype);
  std::ostringstream mismatches;
  size_t mismatch_count = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const double want = stored_as(dtype, expected[i]);
    if (close(values[i], want,
              {dtype_tolerance.relative, dtype_tolerance.absolute + extra_absolute[i]}))
      continue;
    if (++mismatch_count <= 5)
      mismatches << " [" << i << "] " << values[i] << " != " << want << ";";
  }
  CHECK_MESSAGE(mismatch_count == 0, mismatch_count << " of " << values.size()
                                                    << " elements differ:" << mismatches.str());
}

void check_error(const std::function<void()>& body, const std::string& fragment) {
  try {
    body();
    FAIL_CHECK("expected a bp::Error containing \"" << fragment << "\"");
  } catch (const bp::Error& e) {
    const std::string message = e.what();
    CHECK_MESSAGE(message.find(fragment) != std::string::npos,
                  "the message \"" << message << "\" lacks \"" << fragment << "\"");
  }
}

std::vector<Device> test_devices() { return bp::devices(); }

bool provides(Device device, const std::string& kernel_op) {
  for (const bp::PluginInfo& plugin : bp::runtime_info().plugins) {
    const bool on_plugin = std::any_of(plugin.devices.begin(), plugin.devices.end(),
                                       [&](const bp::DeviceInfo& d) { return d.device == device; });
    if (on_plugin) {
      return std::find(plugin.ops.begin(), plugin.ops.end(), kernel_op) != plugin.ops.end();
    }
  }
  return false;
}

std::vector<Device> test_devices(const std::string& kernel_op) {
  std::vector<Device> devices;
  for (const Device device : bp::devices()) {
    if (provides(device, kernel_op)) devices.push_back(device);
  }
  return devices;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  Shape result(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < result.size(); ++i) {
    const size_t d = result.size() - 1 - i;
    const int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    result[d] = sa == 1 ? sb : sa;
  }
  return result;
}

Values broadcast_values(const Values& values, const Shape& from, const Shape& to) {
  Values result(static_cast<size_t>(numel_of(to)));
  const size_t lead = to.size() - from.size();
  Shape index(to.size(), 0);
  for (double& out : result) {
    int64_t source = 0;
    for (size_t d = 0; d < from.size(); ++d) {
      source = source * from[d] + (from[d] == 1 ? 0 : index[lead + d]);
    }
    out = values[static_cast<size_t>(source)];
    for (size_t d = to.size(); d-- > 0;) {  // row-major increment
      if (++index[d] < to[d]) break;
      index[d] = 0;
    }
  }
  return result;
}

Shape reduced_shape(const Shape& sizes, const std::vector<bool>& reduced, bool keepdim) {
  Shape shape;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!reduced[d]) {
      shape.push_back(sizes[d]);
    } else if (keepdim) {
      shape.push_back(1);
    }
  }
  return shape;
}

std::vector<bool> reduced_mask(int64_t ndim, const Shape& dims) {
  std::vector<bool> mask(static_cast<size_t>(ndim), dims.empty());
  for (int64_t dim : dims) {
    if (ndim > 0) mask[static_cast<size_t>(dim < 0 ? dim + ndim : dim)] = true;
  }
  return mask;
}

std::vector<std::vector<int64_t>> group_indices(const Shape& sizes,
                                                const std::vector<bool>& reduced) {
  const Shape kept = reduced_shape(sizes, reduced, /*keepdim=*/true);
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(numel_of(kept)));
  Shape index(sizes.size(), 0);
  for (int64_t flat = 0; flat < numel_of(sizes); ++flat) {
    int64_t group = 0;
    for (size_t d = 0; d < sizes.size(); ++d) group = group * kept[d] + (reduced[d] ? 0 : index[d]);
    groups[static_cast<size_t>(group)].push_back(flat);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return groups;
}

Values reduce_groups(const Values& values, const Shape& sizes, const std::vector<bool>& reduced,
                     const std::function<double(const Values&)>& fn) {
  Values result;
  for (const auto& group : group_indices(sizes, reduced)) {
    Values members;
    for (int64_t i : group) members.push_back(values[static_cast<size_t>(i)]);
    result.push_back(fn(members));
  }
  return result;
}

Values transform_groups(const Values& values, const Shape& sizes, const std::vector<bool>& reduced,
                        const std::function<Values(const Values&)>& fn) {
  Values result(values.size());
  for (const auto& group : group_indices(sizes, reduced)) {
    Values members;
    for (int64_t i : group) members.push_back(values[static_cast<size_t>(i)]);
    const Values transformed = fn(members);
    for (size_t k = 0; k < group.size(); ++k)
      result[static_cast<size_t>(group[k])] = transformed[k];
  }
  return result;
}

}  // namespace optest
