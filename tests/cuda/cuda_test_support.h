// What the CUDA suite shares. Test cases that need a GPU call SKIP_WITHOUT_CUDA_DEVICE() first:
// without one they end there, and when every case that ran was skipped the binary exits with
// kSkipExitCode, which CTest reports as skipped (SKIP_RETURN_CODE), not passed.
#pragma once

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace cudatest {

inline constexpr int kSkipExitCode = 77;

// cuda:0, cuda:1, ... as the core lists them; empty without a GPU.
std::vector<bp::Device> cuda_devices();
// Why the cuda plugin has no devices (its device note), or why it did not load.
std::string no_devices_reason();

// Records the running test case as skipped, saying why.
void skip(const std::string& why);
// Whether every test case that ran was skipped (and at least one ran).
bool every_case_skipped();

// Values of any tensor as doubles, on the host, in row-major order.
std::vector<double> values_of(const bp::Tensor& t);
// Same shape, and every element within `tolerance` (relative, plus as much absolute near 0);
// NaN matches NaN.
void check_close(const bp::Tensor& actual, const bp::Tensor& expected, double tolerance);

}  // namespace cudatest

#define SKIP_WITHOUT_CUDA_DEVICE()                                      \
  if (cudatest::cuda_devices().empty()) {                               \
    cudatest::skip("no CUDA device: " + cudatest::no_devices_reason()); \
    return;                                                             \
  }

// For cases about two GPUs: skipped on machines with fewer.
#define SKIP_WITHOUT_TWO_CUDA_DEVICES()                 \
  SKIP_WITHOUT_CUDA_DEVICE();                           \
  if (cudatest::cuda_devices().size() < 2) {            \
    cudatest::skip("this machine has one CUDA device"); \
    return;                                             \
  }
