#include <backplane/conformance/samples.h>

#include <backplane/sdk/dispatch.hpp>

#include <cmath>
#include <type_traits>
#include <utility>

namespace bp::conformance {

int64_t numel_of(const Shape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::string shape_string(const Shape& sizes) {
  std::string text = "[";
  for (size_t d = 0; d < sizes.size(); ++d) text += (d ? ", " : "") + std::to_string(sizes[d]);
  return text + "]";
}

Values sample_values(int64_t count, DType dtype, uint64_t seed) {
  // splitmix64: deterministic across platforms, unlike the standard distributions.
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(dtype) + 1;
  auto next = [&state](int64_t range) {  // uniform in [0, range)
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<int64_t>((z ^ (z >> 31)) % static_cast<uint64_t>(range));
  };
  Values values(static_cast<size_t>(count));
  for (double& v : values) {
    switch (dtype) {
      case kBool: v = static_cast<double>(next(2)); break;
      case kUInt8: v = static_cast<double>(next(21)); break;
      case kInt8: v = static_cast<double>(next(21) - 10); break;
      case kInt32:
      case kInt64: v = static_cast<double>(next(201) - 100); break;
      default: v = static_cast<double>(next(65) - 32) / 8.0; break;
    }
  }
  return values;
}

Tensor make_tensor(const Values& values, const Shape& sizes, DType dtype, Device device) {
  return plugin::visit(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> typed;
    typed.reserve(values.size());
    for (double v : values) {
      if constexpr (std::is_same_v<T, bool>) {
        typed.push_back(v != 0);
      } else if constexpr (std::is_arithmetic_v<T>) {
        typed.push_back(static_cast<T>(v));
      } else {  // Half, BFloat16
        typed.push_back(T(static_cast<float>(v)));
      }
    }
    return from_vector(typed, sizes).to(device);
  });
}

std::string name_of(Layout layout) {
  switch (layout) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Transposed: return "transposed";
    case Layout::Sliced: return "sliced";
    case Layout::Expanded: return "expanded";
  }
  return "?";
}

bool applies_to(Layout layout, const Shape& sizes) {
  switch (layout) {
    case Layout::Contiguous: return true;
    case Layout::Transposed: return sizes.size() >= 2;
    case Layout::Sliced:
    case Layout::Expanded: return !sizes.empty();
  }
  return false;
}

namespace {

// The shape of the storage tensor that `layout` takes a view of.
Shape base_shape(const Shape& sizes, Layout layout) {
  Shape base = sizes;
  const size_t ndim = sizes.size();
  if (!applies_to(layout, sizes)) return base;
  if (layout == Layout::Transposed) std::swap(base[ndim - 1], base[ndim - 2]);
  if (layout == Layout::Sliced) base[ndim - 1] = 2 * sizes[ndim - 1] + 1;
  if (layout == Layout::Expanded) base[0] = 1;
  return base;
}

Tensor view_as_layout(const Tensor& base, const Shape& sizes, Layout layout) {
  if (!applies_to(layout, sizes)) return base;
  if (layout == Layout::Transposed) return base.transpose(-1, -2);
  if (layout == Layout::Sliced) return base.slice(-1, 1, base.size(-1), 2);
  if (layout == Layout::Expanded) return base.expand(sizes);
  return base;
}

}  // namespace

Tensor sample_tensor(const Shape& sizes, DType dtype, Layout layout, uint64_t seed, Device device) {
  const Shape base = base_shape(sizes, layout);
  return view_as_layout(
      make_tensor(sample_values(numel_of(base), dtype, seed), base, dtype, device), sizes, layout);
}

Tensor empty_tensor(const Shape& sizes, DType dtype, Layout layout, Device device) {
  return view_as_layout(empty(base_shape(sizes, layout), dtype, device), sizes, layout);
}

Tensor laid_out(const Tensor& host, Layout layout, Device device) {
  const Shape sizes = host.sizes().vec();
  if (!applies_to(layout, sizes)) return host.contiguous().to(device);
  // The base is filled on the host so that the view shows `host`'s values, then copied whole.
  Tensor base;
  switch (layout) {
    case Layout::Contiguous: base = host.contiguous(); break;
    case Layout::Transposed: base = host.transpose(-1, -2).contiguous(); break;
    case Layout::Sliced:
      base = zeros(base_shape(sizes, layout), host.dtype(), Device::cpu());
      view_as_layout(base, sizes, layout).copy_(host);
      break;
    case Layout::Expanded: base = host.slice(0, 0, 1).contiguous(); break;
  }
  return view_as_layout(base.to(device), sizes, layout);
}

Tensor host_view(const Tensor& host, Layout layout) {
  if (layout != Layout::Expanded || !applies_to(layout, host.sizes().vec())) return host;
  return host.slice(0, 0, 1).expand(host.sizes());
}

Values values_of(const Tensor& t) {
  return plugin::visit(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::vector<T> typed = t.cpu().to_vector<T>();
    Values values;
    values.reserve(typed.size());
    for (const T v : typed) {
      if constexpr (std::is_arithmetic_v<T>) {
        values.push_back(static_cast<double>(v));
      } else {  // Half, BFloat16
        values.push_back(static_cast<float>(v));
      }
    }
    return values;
  });
}

double stored_as(DType dtype, double value) {
  switch (dtype) {
    case kFloat64: return value;
    // Rounding to the dtype makes values beyond its range infinite, as the kernel's are.
    case kFloat32: return static_cast<float>(value);
    case kFloat16: return static_cast<float>(Half(static_cast<float>(value)));
    case kBFloat16: return static_cast<float>(BFloat16(static_cast<float>(value)));
    default: break;
  }
  if (std::isnan(value) || std::isinf(value)) return value;
  const auto whole = static_cast<int64_t>(value);
  switch (dtype) {
    case kBool: return value != 0 ? 1 : 0;
    case kUInt8: return static_cast<uint8_t>(whole);
    case kInt8: return static_cast<int8_t>(whole);
    case kInt32: return static_cast<int32_t>(whole);
    default: return static_cast<double>(whole);
  }
}

}  // namespace bp::conformance
