// BACKPLANE_DEFAULT_DEVICE: factories given no device, and bp::Event, use bp::default_device();
// tensors made from host data stay on the host. ctest runs this file once as it is (the default
// is the host) and once with the variable naming a fixture device loaded through
// BACKPLANE_PLUGIN_PATH (with BACKPLANE_FALLBACK=cpu, since that device has no kernels).
#include "core_test_support.h"

#include <backplane/event.h>

#include <cstdlib>
#include <vector>

using namespace bp;

TEST_CASE("factories without a device use BACKPLANE_DEFAULT_DEVICE, the host when it is unset") {
  const char* variable = std::getenv("BACKPLANE_DEFAULT_DEVICE");
  const Device expected = variable != nullptr ? Device(variable) : Device::cpu();
  CHECK(default_device() == expected);
  CHECK(runtime_info().default_device == expected);

  CHECK(empty({2}).device() == expected);
  CHECK(empty_strided({2}, {1}).device() == expected);
  CHECK(full({2}, 7).device() == expected);
  CHECK(zeros({2}).device() == expected);
  CHECK(ones({2}).device() == expected);
  CHECK(randn({2}).device() == expected);
  CHECK(rand({2}).device() == expected);
  CHECK(scalar_tensor(3, kInt32).device() == expected);
  CHECK(arange(4).device() == expected);
  CHECK(arange(0, 4, 2).device() == expected);
  CHECK(Event().device() == expected);

  INFO("the values are the ones asked for, wherever they are");
  CHECK(full({3}, 7, kInt32).cpu().to_vector<int32_t>() == std::vector<int32_t>{7, 7, 7});
  CHECK(arange(0, 6, 2, kInt64).cpu().to_vector<int64_t>() == std::vector<int64_t>{0, 2, 4});
  CHECK(add(ones({2}), ones({2})).cpu().to_vector<float>() == std::vector<float>{2, 2});

  INFO("tensors of host data stay on the host");
  std::vector<float> values{1, 2};
  CHECK(from_vector(values, {2}).device() == Device::cpu());
  CHECK(from_blob(values.data(), {2}).device() == Device::cpu());
  CHECK(ones({2}, kFloat32, Device::cpu()).device() == Device::cpu());
}
