// Dispatch: the kernel table, its misses and a failing kernel's message, DLPack views, and
// many threads dispatching at once.
#include "core_test_support.h"

#include "dispatch/dispatch.h"
#include "dispatch/dlpack_bridge.h"

#include <atomic>
#include <thread>

using namespace bp;
using coretest::check_error;
using coretest::fixture_device;

namespace {

// A mul.out for the fixture device that writes 42 everywhere, to see install_kernel take effect.
bp_status mul_writes_42(const DLTensor*, const DLTensor*, DLTensor* out) {
  float* data = reinterpret_cast<float*>(static_cast<char*>(out->data) + out->byte_offset);
  int64_t numel = 1;
  for (int i = 0; i < out->ndim; ++i) numel *= out->shape[i];
  for (int64_t i = 0; i < numel; ++i) data[i] = 42.0f;
  return BP_STATUS_OK;
}

}  // namespace

TEST_CASE("a backend's own kernels run on its device") {
  const Tensor a = from_vector<float>({1, 2}, {2}).to(fixture_device());
  const Tensor b = from_vector<float>({10, 20}, {2}).to(fixture_device());
  const Tensor sum = add(a, b, 2);
  CHECK(sum.device() == fixture_device());
  CHECK(sum.to_vector<float>() == std::vector<float>{21, 42});
}

TEST_CASE("an op the backend lacks names the op, the device, the plugin and what to do") {
  const Tensor a = ones({2}).to(fixture_device());
  check_error([&] { mul(a, a); }, ErrorCode::NotImplemented,
              {"mul.out has no kernel for device fixture:0", "the fixture plugin (",
               "libbackplane_fixture.so) does not implement it", "x.to(\"cpu\")", "bp-info"});
}

TEST_CASE("a failing kernel's message reaches the caller with the op, device and plugin") {
  const Tensor ints = from_vector<int32_t>({1, 2}, {2}).to(fixture_device());
  check_error([&] { add(ints, ints); }, ErrorCode::InvalidArgument,
              {"add.out failed on fixture:0 (plugin fixture): fixture add.out handles "
               "contiguous float32 tensors only"});
  // The process keeps working.
  const Tensor floats = ones({2}).to(fixture_device());
  CHECK(add(floats, floats).to_vector<float>() == std::vector<float>{2, 2});
}

TEST_CASE("install_kernel puts a kernel in the table and nullptr takes it out") {
  const Tensor a = ones({3}).to(fixture_device());
  const int16_t type = fixture_device().type();
  detail::install_kernel(
      detail::OpId::mul_out, type,
      reinterpret_cast<bp_kernel_fn>(reinterpret_cast<void (*)()>(&mul_writes_42)));
  CHECK(mul(a, a).to_vector<float>() == std::vector<float>{42, 42, 42});
  detail::install_kernel(detail::OpId::mul_out, type, nullptr);
  check_error([&] { mul(a, a); }, ErrorCode::NotImplemented, {"mul.out has no kernel"});
  check_error(
      [] { detail::install_kernel(detail::OpId::mul_out, detail::kMaxDeviceTypes, nullptr); },
      ErrorCode::Internal, {"outside the dispatch table"});
}

TEST_CASE("clear_kernels empties a device type's column") {
  const Tensor a = ones({2}).to(fixture_device());
  const int16_t type = fixture_device().type();
  const bp_kernel_fn fixture_add = detail::kernel_in_table(detail::OpId::add_out, fixture_device());
  detail::clear_kernels(type);
  check_error([&] { add(a, a); }, ErrorCode::NotImplemented, {"add.out has no kernel"});
  detail::install_kernel(detail::OpId::add_out, type, fixture_add);
  CHECK(add(a, a).to_vector<float>() == std::vector<float>{2, 2});
}

TEST_CASE("a DLPack view describes the tensor's own sizes, strides and offset") {
  const Tensor t = from_vector<int64_t>({0, 1, 2, 3, 4, 5}, {2, 3}).slice(1, 1, 3).transpose(0, 1);
  const DLTensor view = detail::to_dlpack_view(t);
  CHECK(view.ndim == 2);
  CHECK(view.shape[0] == 2);
  CHECK(view.shape[1] == 2);
  CHECK(view.strides[0] == 1);
  CHECK(view.strides[1] == 3);
  CHECK(view.byte_offset == sizeof(int64_t));
  CHECK(view.device.device_type == kDLCPU);
  CHECK(view.dtype.code == kDLInt);
  CHECK(view.dtype.bits == 64);
  CHECK(*reinterpret_cast<const int64_t*>(static_cast<const char*>(view.data) + view.byte_offset) ==
        1);

  const DLTensor scalar_view = detail::to_dlpack_view(scalar_tensor(1, kBool));
  CHECK(scalar_view.ndim == 0);
  CHECK(scalar_view.strides != nullptr);
  CHECK(scalar_view.dtype.code == BP_DL_BOOL_CODE);

  const std::vector<Tensor> tensors{t, scalar_tensor(1, kBool)};
  const detail::DLTensorList list(tensors);
  CHECK(list.get().size == 2);
  CHECK(list.get().data[0]->shape[0] == 2);
  CHECK(list.get().data[1]->ndim == 0);
}

TEST_CASE("8 threads dispatching add at once all get their own right answers") {
  constexpr int kThreads = 8;
  constexpr int kIterations = 200;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([thread, &wrong] {
      for (int i = 0; i < kIterations; ++i) {
        const auto base = static_cast<float>(thread * 1000 + i);
        const Tensor a = full({64}, base);
        const Tensor b = from_vector<float>(std::vector<float>(64, 0.5f), {64});
        const std::vector<float> sum = add(a, b, 2).to_vector<float>();
        for (float value : sum) {
          if (value != base + 1.0f) wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong.load() == 0);
}
