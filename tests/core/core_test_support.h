// What the core suites share: checking that an expression throws a bp::Error of a given code
// whose message says what was wrong.
#pragma once

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace coretest {

// Runs `body`, which must throw a bp::Error with `code` whose message contains every one of
// `fragments`.
template <typename Body>
void check_error(Body&& body, bp::ErrorCode code,
                 std::initializer_list<std::string_view> fragments) {
  try {
    body();
    FAIL("expected a bp::Error, but nothing was thrown");
  } catch (const bp::Error& e) {
    const std::string message = e.what();
    INFO("message: " << message);
    CHECK(static_cast<int>(e.code()) == static_cast<int>(code));
    for (std::string_view fragment : fragments) {
      CHECK_MESSAGE(message.find(fragment) != std::string::npos,
                    "missing \"" << std::string(fragment) << "\"");
    }
  }
}

template <typename Body>
void check_invalid_argument(Body&& body, std::initializer_list<std::string_view> fragments) {
  check_error(std::forward<Body>(body), bp::ErrorCode::InvalidArgument, fragments);
}

inline std::vector<int64_t> shape_of(const bp::Tensor& t) { return t.sizes().vec(); }

// Devices of the fixture plugins, each loaded once per process on first use:
// "fixture" uses host memory and has only an add.out kernel (contiguous Float32);
// "fixture_device_memory" has 1 MiB of memory of its own, events, and no kernels;
// "fixture_refuses_attention" uses host memory and has a fused attention kernel that refuses
// every case, and a float32 copy_.
bp::Device fixture_device();
bp::Device fixture_device_memory_device();
bp::Device fixture_refuses_attention_device();

// Whether this run has BACKPLANE_FALLBACK=cpu: ctest runs the cases whose names mention the
// variable once with it and once without, and each checks what its setting promises.
bool falls_back_to_cpu();

// The value of `backend`'s counter `name`, read now; a test failure if it has none such.
uint64_t backend_counter(std::string_view backend, std::string_view name);

}  // namespace coretest
