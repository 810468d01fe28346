// A backend may list a fused kernel op and still refuse a case of it: BP_STATUS_UNIMPLEMENTED
// sends scaled_dot_product_attention to its composite path, while any other failure of the
// fused kernel reaches the caller. The fixture backend refuses every case and has no other
// kernel, so its composite path runs only with BACKPLANE_FALLBACK=cpu; ctest runs these cases
// with and without it.
#include "core_test_support.h"

#include <cmath>
#include <vector>

using namespace bp;
using coretest::backend_counter;
using coretest::check_error;
using coretest::falls_back_to_cpu;
using coretest::fixture_refuses_attention_device;

namespace {

constexpr const char* kBackend = "fixture_refuses_attention";
constexpr const char* kCalls = "fixture.attention_calls";

struct Operands {
  Tensor query, key, value;
};

Operands operands_on(Device device) {
  return {randn({2, 5, 8}).to(device), randn({2, 7, 8}).to(device), randn({2, 7, 4}).to(device)};
}

}  // namespace

TEST_CASE("a refused fused attention takes the composite path (BACKPLANE_FALLBACK set or not)") {
  const Device device = fixture_refuses_attention_device();
  const Operands on_device = operands_on(device);
  const uint64_t calls_before = backend_counter(kBackend, kCalls);
  if (falls_back_to_cpu()) {
    const Tensor result =
        scaled_dot_product_attention(on_device.query, on_device.key, on_device.value);
    CHECK(result.device() == device);
    const Tensor expected = scaled_dot_product_attention(on_device.query.cpu(), on_device.key.cpu(),
                                                         on_device.value.cpu());
    const std::vector<float> got = result.to_vector<float>();
    const std::vector<float> want = expected.to_vector<float>();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-5f);
  } else {
    // The composite's first op has no kernel here: that it is reached shows the refusal was
    // taken as "use the composite", not passed on.
    check_error(
        [&] { scaled_dot_product_attention(on_device.query, on_device.key, on_device.value); },
        ErrorCode::NotImplemented,
        {"has no kernel for device fixture_refuses_attention:0", "BACKPLANE_FALLBACK=cpu"});
  }
  CHECK(backend_counter(kBackend, kCalls) == calls_before + 1);
}

TEST_CASE(
    "a fused attention that fails rather than refuses reaches the caller (BACKPLANE_FALLBACK set "
    "or not)") {
  const Operands on_device = operands_on(fixture_refuses_attention_device());
  const uint64_t calls_before = backend_counter(kBackend, kCalls);
  check_error(
      [&] {
        scaled_dot_product_attention(on_device.query, on_device.key, on_device.value, std::nullopt,
                                     0.0, /*is_causal=*/true);
      },
      ErrorCode::Backend,
      {"_scaled_dot_product_fused_attention.out failed on fixture_refuses_attention:0",
       "the device failed (on purpose)"});
  CHECK(backend_counter(kBackend, kCalls) == calls_before + 1);

  INFO("called directly, a refusal is an error like any other");
  check_error(
      [&] { _scaled_dot_product_fused_attention(on_device.query, on_device.key, on_device.value); },
      ErrorCode::NotImplemented, {"no case is fused on this device"});
}
