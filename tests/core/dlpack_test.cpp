// DLPack exchange: bp::to_dlpack, bp::from_dlpack and bp::dlpack_device.
#include "core_test_support.h"

#include "dispatch/dlpack_bridge.h"

#include <cstdint>
#include <cstring>
#include <vector>

using namespace bp;
using coretest::check_invalid_argument;
using coretest::fixture_device_memory_device;
using Shape = std::vector<int64_t>;

namespace {

// Memory another library hands over: host floats with its own shape and strides arrays, and a
// deleter that counts its calls. It outlives every tensor made from it, so a count of 0 can be
// checked while tensors still read it.
struct Producer {
  std::vector<float> values;
  Shape shape;
  Shape strides;  // empty: a NULL strides array
  uint64_t byte_offset = 0;
  DLDevice device{kDLCPU, 0};
  DLDataType dtype{kDLFloat, 32, 1};
  DLManagedTensor managed{};
  int deletes = 0;

  DLManagedTensor* hand_over() {
    DLTensor& view = managed.dl_tensor;
    view.data = values.empty() ? nullptr : values.data();
    view.device = device;
    view.ndim = static_cast<int32_t>(shape.size());
    view.dtype = dtype;
    view.shape = shape.data();
    view.strides = strides.empty() ? nullptr : strides.data();
    view.byte_offset = byte_offset;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deletes;
    };
    return &managed;
  }
};

Producer counting_producer(Shape shape) {
  Producer producer;
  producer.values = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  producer.shape = std::move(shape);
  return producer;
}

// Makes `device`'s backend declare another DLPack device type, as a plugin would, until the
// end of the scope.
class DeclaredDLPackType {
 public:
  DeclaredDLPackType(Device device, DLDeviceType type)
      : device_(device), declared_(detail::plugin_dlpack_device_type(device)) {
    detail::set_dlpack_device_type(device.type(), type);
  }
  DeclaredDLPackType(const DeclaredDLPackType&) = delete;
  DeclaredDLPackType& operator=(const DeclaredDLPackType&) = delete;
  ~DeclaredDLPackType() { detail::set_dlpack_device_type(device_.type(), declared_); }

 private:
  Device device_;
  DLDeviceType declared_;
};

// Runs `body`, which must make from_dlpack refuse `producer`'s tensor with a message holding
// every one of `fragments`, and checks that the deleter ran once even so.
template <typename Body>
void check_refused(Producer& producer, Body&& body,
                   std::initializer_list<std::string_view> fragments) {
  const int before = producer.deletes;
  check_invalid_argument(std::forward<Body>(body), fragments);
  CHECK(producer.deletes == before + 1);
}

}  // namespace

TEST_CASE("to_dlpack shares a host tensor's memory until the consumer calls the deleter") {
  Tensor t = from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  const IntrusivePtr<StorageImpl> storage = t.impl()->storage();
  const uint32_t references = storage->use_count();
  DLManagedTensor* managed = to_dlpack(t);
  const DLTensor& view = managed->dl_tensor;
  CHECK(view.device.device_type == kDLCPU);
  CHECK(view.device.device_id == 0);
  CHECK(view.ndim == 2);
  CHECK(Shape(view.shape, view.shape + 2) == Shape{2, 3});
  CHECK(Shape(view.strides, view.strides + 2) == Shape{3, 1});
  CHECK(view.dtype.code == kDLFloat);
  CHECK(view.dtype.bits == 32);
  CHECK(view.dtype.lanes == 1);
  CHECK(view.data == t.data_ptr());
  CHECK(view.byte_offset == 0);

  static_cast<float*>(view.data)[4] = 40;
  CHECK(t.to_vector<float>() == std::vector<float>{0, 1, 2, 3, 40, 5});
  t = Tensor();
  CHECK(storage->use_count() == references);
  CHECK(static_cast<const float*>(view.data)[1] == 1);
  managed->deleter(managed);
  CHECK(storage->use_count() == references - 1);
}

TEST_CASE("to_dlpack puts a view's offset in the address, for consumers that ignore byte_offset") {
  const Tensor t = from_vector<int32_t>({0, 1, 2, 3, 4, 5}, {2, 3}).slice(1, 1, 3).transpose(0, 1);
  DLManagedTensor* managed = to_dlpack(t);
  const DLTensor& view = managed->dl_tensor;
  CHECK(Shape(view.shape, view.shape + 2) == Shape{2, 2});
  CHECK(Shape(view.strides, view.strides + 2) == Shape{1, 3});
  CHECK(view.byte_offset == 0);
  CHECK(view.data == t.data_ptr());
  CHECK(*static_cast<const int32_t*>(view.data) == 1);
  CHECK(view.dtype.code == kDLInt);
  managed->deleter(managed);

  DLManagedTensor* scalar = to_dlpack(scalar_tensor(true, kBool));
  CHECK(scalar->dl_tensor.ndim == 0);
  CHECK(scalar->dl_tensor.dtype.code == BP_DL_BOOL_CODE);
  CHECK(scalar->dl_tensor.dtype.bits == 8);
  CHECK(*static_cast<const bool*>(scalar->dl_tensor.data));
  scalar->deleter(scalar);
}

TEST_CASE("a round trip through DLPack aliases the tensor and shares its version counter") {
  Tensor t = zeros({2, 3});
  Tensor back = from_dlpack(to_dlpack(t));
  CHECK(back.impl()->storage().get() == t.impl()->storage().get());
  CHECK(back.sizes().vec() == Shape{2, 3});
  CHECK(back.strides().vec() == Shape{3, 1});
  back.fill_(5);
  CHECK(t.to_vector<float>() == std::vector<float>(6, 5));
  CHECK(t._version() == back._version());
  const uint64_t before = back._version();
  t.add_(1);
  CHECK(back._version() == before + 1);
  CHECK(back.to_vector<float>() == std::vector<float>(6, 6));

  const Tensor row = t.select(0, 1);
  const Tensor row_back = from_dlpack(to_dlpack(row));
  CHECK(row_back.storage_offset() == 3);
  CHECK(row_back.sizes().vec() == Shape{3});
  CHECK(row_back.data_ptr() == row.data_ptr());
}

TEST_CASE("from_dlpack calls the producer's deleter once, after the last view is gone") {
  Producer producer = counting_producer({3, 4});
  Tensor t = from_dlpack(producer.hand_over());
  CHECK(t.device() == Device::cpu());
  CHECK(t.dtype() == kFloat32);
  CHECK(t.sizes().vec() == Shape{3, 4});
  CHECK(t.strides().vec() == Shape{4, 1});
  CHECK(t.data_ptr() == producer.values.data());
  CHECK(t.impl()->storage()->nbytes() == 12 * sizeof(float));

  Tensor row = t.select(0, 2);
  t = Tensor();
  CHECK(producer.deletes == 0);
  IntrusivePtr<StorageImpl> storage = row.impl()->storage();
  row.fill_(7);
  CHECK(producer.values[8] == 7);
  row = Tensor();
  CHECK(producer.deletes == 0);
  storage = IntrusivePtr<StorageImpl>();
  CHECK(producer.deletes == 1);
}

TEST_CASE("from_dlpack honours a producer's strides and byte_offset") {
  Producer producer = counting_producer({2, 3});
  producer.strides = {1, 2};  // column-major, from the third value on
  producer.byte_offset = 2 * sizeof(float);
  {
    const Tensor t = from_dlpack(producer.hand_over());
    CHECK(t.strides().vec() == Shape{1, 2});
    CHECK(t.storage_offset() == 0);
    CHECK(t.data_ptr() == producer.values.data() + 2);
    // The farthest element is 1 + 2 * 2 past the first.
    CHECK(t.impl()->storage()->nbytes() == 6 * sizeof(float));
    CHECK(t.to_vector<float>() == std::vector<float>{2, 4, 6, 3, 5, 7});
  }
  CHECK(producer.deletes == 1);
}

TEST_CASE("tensors with no elements cross DLPack both ways") {
  const Tensor empty_host = zeros({0, 3});
  DLManagedTensor* managed = to_dlpack(empty_host);
  CHECK(managed->dl_tensor.ndim == 2);
  CHECK(managed->dl_tensor.shape[0] == 0);
  CHECK(from_dlpack(managed).numel() == 0);

  Producer producer;
  producer.shape = {0, 5};
  {
    const Tensor t = from_dlpack(producer.hand_over());
    CHECK(t.sizes().vec() == Shape{0, 5});
    CHECK(t.impl()->storage()->nbytes() == 0);
    CHECK(t.to_vector<float>().empty());
  }
  CHECK(producer.deletes == 1);
}

TEST_CASE("from_dlpack takes every dtype Backplane has, by DLPack's code, bits and lanes") {
  const std::pair<DLDataType, DType> types[] = {
      {{kDLFloat, 32, 1}, kFloat32},   {{kDLFloat, 64, 1}, kFloat64},
      {{kDLFloat, 16, 1}, kFloat16},   {{kDLBfloat, 16, 1}, kBFloat16},
      {{kDLInt, 8, 1}, kInt8},         {{kDLUInt, 8, 1}, kUInt8},
      {{kDLInt, 32, 1}, kInt32},       {{kDLInt, 64, 1}, kInt64},
      {{BP_DL_BOOL_CODE, 8, 1}, kBool}};
  for (const auto& [dlpack_type, dtype] : types) {
    CAPTURE(dtype_name(dtype));
    Producer producer = counting_producer({2});
    producer.dtype = dlpack_type;
    CHECK(from_dlpack(producer.hand_over()).dtype() == dtype);
    CHECK(producer.deletes == 1);
    DLManagedTensor* managed = to_dlpack(empty({1}, dtype));
    CHECK(managed->dl_tensor.dtype.code == dlpack_type.code);
    CHECK(managed->dl_tensor.dtype.bits == dlpack_type.bits);
    CHECK(managed->dl_tensor.dtype.lanes == 1);
    managed->deleter(managed);
  }
}

TEST_CASE("from_dlpack refuses what it cannot take, naming it, and still calls the deleter") {
  check_invalid_argument([] { from_dlpack(nullptr); },
                         {"from_dlpack: the DLManagedTensor is null"});

  Producer producer = counting_producer({2, 3});
  producer.dtype = {kDLComplex, 64, 1};
  check_refused(producer, [&] { from_dlpack(producer.hand_over()); },
                {"from_dlpack: the DLPack dtype (code 5 (kDLComplex), 64 bits, 1 lanes) is none "
                 "of Backplane's"});
  producer.dtype = {kDLFloat, 32, 4};
  check_refused(producer, [&] { from_dlpack(producer.hand_over()); }, {"32 bits, 4 lanes"});
  producer.dtype = {kDLFloat, 32, 1};

  producer.shape = {2, -3};
  check_refused(producer, [&] { from_dlpack(producer.hand_over()); },
                {"from_dlpack: negative size -3 in shape [2, -3]"});
  producer.shape = {2, 3};
  producer.strides = {-1, 1};
  check_refused(producer, [&] { from_dlpack(producer.hand_over()); },
                {"from_dlpack: negative stride -1"});
  producer.strides = {};
  producer.shape = Shape(65, 1);
  check_refused(producer, [&] { from_dlpack(producer.hand_over()); },
                {"from_dlpack: the DLTensor has 65 dimensions; Backplane's kernels take 0 to 64"});
  producer.shape = {2, 3};
  check_refused(producer,
                [&] {
                  DLManagedTensor* managed = producer.hand_over();
                  managed->dl_tensor.ndim = -1;
                  from_dlpack(managed);
                },
                {"from_dlpack: the DLTensor has -1 dimensions"});
  check_refused(
      producer,
      [&] {
        DLManagedTensor* managed = producer.hand_over();
        managed->dl_tensor.data = nullptr;
        from_dlpack(managed);
      },
      {"from_dlpack: the DLTensor's data pointer is null, but shape [2, 3] has elements"});

  fixture_device_memory_device();  // loaded, so that the message lists it
  producer.device = {kDLVPI, 0};
  check_refused(producer, [&] { from_dlpack(producer.hand_over()); },
                {"from_dlpack: the DLPack device type kDLVPI (9) is no loaded backend's",
                 "the loaded backends take: ", "fixture_device_memory (kDLCPU (1))"});
  // A number DLPack 0.6's enum has no room for, as a C producer may write it.
  const int32_t unknown_type = 42;
  std::memcpy(&producer.device.device_type, &unknown_type, sizeof(unknown_type));
  check_refused(producer, [&] { from_dlpack(producer.hand_over()); },
                {"the DLPack device type 42 (unknown to DLPack 0.6) is no loaded backend's"});
}

TEST_CASE("a DLManagedTensor without a deleter can be imported") {
  Producer producer = counting_producer({4});
  DLManagedTensor* managed = producer.hand_over();
  managed->deleter = nullptr;
  CHECK(from_dlpack(managed).to_vector<float>() == std::vector<float>{0, 1, 2, 3});
  CHECK(producer.deletes == 0);
}

TEST_CASE("to_dlpack and dlpack_device refuse undefined tensors and memory DLPack cannot name") {
  check_invalid_argument([] { to_dlpack(Tensor()); }, {"to_dlpack: the tensor is undefined"});
  check_invalid_argument([] { dlpack_device(Tensor()); },
                         {"dlpack_device: the tensor is undefined"});

  const Device device = fixture_device_memory_device();
  const Tensor t = empty({2}, kFloat32, device);
  const DeclaredDLPackType opaque(device, kDLExtDev);
  const char* const refusal =
      "fixture_device_memory tensors cannot be shared through DLPack: the plugin does not "
      "declare a DLPack device type; copy to the host first (tensor.cpu())";
  check_invalid_argument([&] { to_dlpack(t); }, {"to_dlpack: ", refusal});
  check_invalid_argument([&] { dlpack_device(t); }, {"dlpack_device: ", refusal});
  CHECK(dlpack_device(t.cpu()).device_type == kDLCPU);
}

TEST_CASE("a device whose pointers are host addresses crosses DLPack as kDLCPU") {
  // fixture_device_memory declares kDLCPU: its blocks are malloc'ed.
  const Device device = fixture_device_memory_device();
  const Tensor t = from_vector<float>({0, 1, 2, 3}, {2, 2}).to(device);
  const Tensor row = t.select(0, 1);
  CHECK(dlpack_device(row).device_type == kDLCPU);
  DLManagedTensor* managed = to_dlpack(row);
  CHECK(managed->dl_tensor.byte_offset == 0);
  CHECK(managed->dl_tensor.data ==
        static_cast<char*>(t.impl()->storage()->data()) + 2 * sizeof(float));
  CHECK(*static_cast<const float*>(managed->dl_tensor.data) == 2);
  // Backplane's own DLManagedTensor comes back on the device it left.
  const Tensor back = from_dlpack(managed);
  CHECK(back.device() == device);
  CHECK(back.impl()->storage().get() == t.impl()->storage().get());
}

TEST_CASE("a handle-based device crosses DLPack with its type, index and a byte_offset") {
  const Device device = fixture_device_memory_device();
  const DeclaredDLPackType handles(device, kDLVulkan);
  const Tensor t = from_vector<float>({0, 1, 2, 3, 4, 5}, {3, 2}).to(device);
  const Tensor row = t.select(0, 2);
  const DLDevice dl_device = dlpack_device(row);
  CHECK(dl_device.device_type == kDLVulkan);
  CHECK(dl_device.device_id == device.index());

  DLManagedTensor* managed = to_dlpack(row);
  CHECK(managed->dl_tensor.device.device_type == kDLVulkan);
  CHECK(managed->dl_tensor.data == t.impl()->storage()->data());
  CHECK(managed->dl_tensor.byte_offset == 4 * sizeof(float));
  managed->deleter(managed);

  // Another library's DLManagedTensor of that type: the handle plus an offset into it.
  struct Holder {
    Tensor tensor;
    int deletes = 0;
  } holder{t};
  DLManagedTensor foreign{};
  foreign.dl_tensor = t.impl()->dlpack_view();
  foreign.dl_tensor.device = {kDLVulkan, device.index()};
  foreign.dl_tensor.byte_offset = 2 * sizeof(float);
  int64_t shape[] = {2, 2};
  foreign.dl_tensor.shape = shape;
  foreign.manager_ctx = &holder;
  foreign.deleter = [](DLManagedTensor* self) {
    ++static_cast<Holder*>(self->manager_ctx)->deletes;
  };
  {
    const Tensor imported = from_dlpack(&foreign);
    CHECK(imported.device() == device);
    CHECK(imported.storage_offset() == 2);
    CHECK(imported.impl()->storage()->data() == t.impl()->storage()->data());
    CHECK(imported.impl()->storage()->nbytes() == 6 * sizeof(float));
    CHECK(imported.cpu().to_vector<float>() == std::vector<float>{2, 3, 4, 5});
  }
  CHECK(holder.deletes == 1);

  foreign.dl_tensor.byte_offset = 2;
  check_invalid_argument([&] { from_dlpack(&foreign); },
                         {"from_dlpack: the DLTensor's byte_offset 2 is not a multiple of its "
                          "element size 4, which kDLVulkan (7) memory needs"});
  foreign.dl_tensor.byte_offset = 0;
  foreign.dl_tensor.device.device_id = 1;
  check_invalid_argument([&] { from_dlpack(&foreign); },
                         {"from_dlpack: the DLPack device is kDLVulkan (7) device 1, but backend "
                          "fixture_device_memory, which takes that type, has 1 device(s)"});
  CHECK(holder.deletes == 3);
}

TEST_CASE("an OpenCL tensor crosses DLPack as kDLOpenCL with its device index") {
  std::vector<Device> opencl;
  for (const Device& device : devices()) {
    if (device.type_name() == "opencl") opencl.push_back(device);
  }
  if (opencl.empty()) MESSAGE("skipped: the opencl backend has no devices");
  for (const Device& device : opencl) {
    CAPTURE(device.str());
    const Tensor t = from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2}).to(device);
    const Tensor row = t.select(0, 1);
    DLManagedTensor* managed = to_dlpack(row);
    CHECK(managed->dl_tensor.device.device_type == kDLOpenCL);
    CHECK(managed->dl_tensor.device.device_id == device.index());
    // A cl_mem takes no arithmetic: the offset stays in byte_offset.
    CHECK(managed->dl_tensor.data == t.impl()->storage()->data());
    CHECK(managed->dl_tensor.byte_offset == 2 * sizeof(float));

    // Another library's DLManagedTensor of an OpenCL buffer, as this one describes it.
    struct Holder {
      DLManagedTensor* exported;
      int deletes = 0;
    } holder{managed};
    DLManagedTensor foreign{};
    foreign.dl_tensor = managed->dl_tensor;
    foreign.manager_ctx = &holder;
    foreign.deleter = [](DLManagedTensor* self) {
      auto* held = static_cast<Holder*>(self->manager_ctx);
      held->exported->deleter(held->exported);
      ++held->deletes;
    };
    {
      const Tensor imported = from_dlpack(&foreign);
      CHECK(imported.device() == device);
      CHECK(imported.storage_offset() == 2);
      CHECK(imported.cpu().to_vector<float>() == std::vector<float>{2, 3});
    }
    CHECK(holder.deletes == 1);
  }
}
