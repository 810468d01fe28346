// randn and rand: values come from one seeded host generator and are then copied to the
// device, so a seed gives the same numbers on every backend.
#include <backplane/backplane.h>

#include <backplane/sdk/dispatch.hpp>

#include "tensor/host_address.h"

#include <fmt/format.h>

#include <cmath>
#include <mutex>
#include <numbers>
#include <random>

namespace bp {
namespace {

// PyTorch's default seed, so that an unseeded program is still reproducible.
constexpr uint64_t kDefaultSeed = 67280421310721ull;

struct HostGenerator {
  std::mutex mutex;
  std::mt19937_64 engine{kDefaultSeed};
};

HostGenerator& host_generator() {
  static HostGenerator generator;
  return generator;
}

// Mantissa bits of each floating dtype: a uniform value with no more bits than the type holds
// never rounds up to 1.
int mantissa_digits(DType dtype) {
  switch (dtype) {
    case DType::Float64: return 53;
    case DType::Float32: return 24;
    case DType::Float16: return 11;
    default: return 8;  // BFloat16
  }
}

void check_floating(DType dtype, const char* op) {
  if (!is_floating_point(dtype)) {
    throw Error(
        fmt::format("{}: dtype {} is not a floating-point type; {} makes Float, Double, "
                    "Half or BFloat16 tensors (convert afterwards with .to(dtype))",
                    op, dtype_name(dtype), op));
  }
}

// Fills a new host tensor with next(engine) for every element, then moves it to `device`.
template <typename Next>
Tensor generate(IntArrayRef sizes, DType dtype, Device device, Next next) {
  Tensor host = empty(sizes, dtype, Device::cpu());
  const int64_t numel = host.numel();
  {
    HostGenerator& generator = host_generator();
    std::lock_guard lock(generator.mutex);
    plugin::visit(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = detail::host_address<T>(host);
      for (int64_t i = 0; i < numel; ++i) {
        out[i] = static_cast<T>(static_cast<plugin::compute_t<T>>(next(generator.engine)));
      }
    });
  }
  return host.to(device);
}

}  // namespace

void manual_seed(uint64_t seed) {
  HostGenerator& generator = host_generator();
  std::lock_guard lock(generator.mutex);
  generator.engine.seed(seed);
}

Tensor rand(IntArrayRef sizes, DType dtype, Device device) {
  check_floating(dtype, "rand");
  const int digits = mantissa_digits(dtype);
  const double scale = std::ldexp(1.0, -digits);
  return generate(sizes, dtype, device, [&](std::mt19937_64& engine) {
    return static_cast<double>(engine() >> (64 - digits)) * scale;
  });
}

// Box-Muller on the engine's raw output rather than std::normal_distribution, whose results
// differ between standard libraries.
Tensor randn(IntArrayRef sizes, DType dtype, Device device) {
  check_floating(dtype, "randn");
  return generate(sizes, dtype, device, [](std::mt19937_64& engine) {
    constexpr double kScale = 1.0 / 9007199254740992.0;                      // 2^-53
    const double u1 = (static_cast<double>(engine() >> 11) + 1.0) * kScale;  // (0, 1]
    const double u2 = static_cast<double>(engine() >> 11) * kScale;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  });
}

}  // namespace bp
