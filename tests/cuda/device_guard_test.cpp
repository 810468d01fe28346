// Which device the calling thread is on after ops on a GPU: the one it was on, and for a thread
// that was on none, no context created on GPU 0 for it.
#include "cuda_test_support.h"
#include "runtime/device_guard.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <thread>

namespace {

// Whether CUDA device `ordinal` has an active primary context (the driver's answer, looked up
// through the runtime as the plugin looks up its driver calls).
bool has_primary_context(int ordinal) {
  using DeviceGet = CUresult (*)(CUdevice*, int);
  using PrimaryCtxGetState = CUresult (*)(CUdevice, unsigned int*, int*);
  void* device_get = nullptr;
  void* get_state = nullptr;
  REQUIRE(cudaGetDriverEntryPointByVersion("cuDeviceGet", &device_get, 2000, cudaEnableDefault,
                                           nullptr) == cudaSuccess);
  REQUIRE(cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &get_state, 7000,
                                           cudaEnableDefault, nullptr) == cudaSuccess);
  CUdevice device{};
  REQUIRE(reinterpret_cast<DeviceGet>(device_get)(&device, ordinal) == CUDA_SUCCESS);
  unsigned int flags = 0;
  int active = 0;
  REQUIRE(reinterpret_cast<PrimaryCtxGetState>(get_state)(device, &flags, &active) == CUDA_SUCCESS);
  return active != 0;
}

TEST_CASE(
    "ops on one GPU leave the calling thread on its device, and open no context on GPU 0 for a "
    "thread on none") {
  SKIP_WITHOUT_TWO_CUDA_DEVICES();
  const std::vector<bp::Device> gpus = cudatest::cuda_devices();
  std::thread([&] {
    CHECK_FALSE(bp::cuda::thread_has_context());
    cudatest::check_close(bp::add(bp::ones({1000}).to(gpus[1]), 1), bp::full({1000}, 2.0), 0);
    CHECK_FALSE(has_primary_context(0));
    int current = -1;
    REQUIRE(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 1);  // where the ops ran: its context exists anyway
  }).join();
  std::thread([&] {
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    CHECK(bp::cuda::thread_has_context());
    cudatest::check_close(bp::add(bp::ones({1000}).to(gpus[0]), 1), bp::full({1000}, 2.0), 0);
    int current = -1;
    REQUIRE(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 1);
  }).join();
}

}  // namespace
