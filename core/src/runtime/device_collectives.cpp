// The public face of a backend's collectives (backplane/device_collectives.h).
#include <backplane/device_collectives.h>

#include "dispatch/dlpack_bridge.h"
#include "runtime/backend.h"
#include "runtime/registry.h"

#include <backplane/error.h>

#include <fmt/format.h>

namespace bp {

namespace {

bp_reduction to_abi(Reduction reduction) {
  switch (reduction) {
    case Reduction::Sum: return BP_REDUCTION_SUM;
    case Reduction::Max: return BP_REDUCTION_MAX;
    case Reduction::Min: return BP_REDUCTION_MIN;
  }
  throw Error(ErrorCode::Internal, "an unknown reduction");
}

// A plugin writes through the view; the tensor's storage counts the write.
void count_write(const Tensor& tensor) { tensor.impl()->storage()->bump_version(); }

}  // namespace

std::optional<DeviceCollectives> DeviceCollectives::of(Device device) {
  if (device.is_cpu()) return std::nullopt;
  const detail::Backend* backend = detail::Registry::get().backend(device.type());
  if (backend == nullptr || backend->collectives() == nullptr) return std::nullopt;
  return DeviceCollectives(*backend);
}

const std::string& DeviceCollectives::backend() const { return backend_->info().name; }

bool DeviceCollectives::reduces(DType dtype) const {
  return (backend_->collectives()->reducible_dtypes >> static_cast<uint32_t>(dtype)) & 1u;
}

std::vector<uint8_t> DeviceCollectives::make_communicator_id() const {
  return backend_->make_communicator_id();
}

std::unique_ptr<DeviceCommunicator> DeviceCollectives::create_communicator(
    Device device, int rank, int size, const std::vector<uint8_t>& id) const {
  if (device.type() != backend_->device_type()) {
    throw Error(fmt::format("create_communicator: {} is not a device of backend '{}'", device.str(),
                            backend()));
  }
  bp_communicator communicator = backend_->create_communicator(device.index(), rank, size, id);
  return std::unique_ptr<DeviceCommunicator>(
      new DeviceCommunicator(*backend_, device, communicator));
}

DeviceCommunicator::~DeviceCommunicator() {
  backend_->destroy_communicator(static_cast<bp_communicator>(communicator_));
}

void DeviceCommunicator::check(const Tensor& tensor, std::string_view collective,
                               std::string_view what) const {
  if (!tensor.defined() || tensor.device() != device_ || !tensor.is_contiguous()) {
    throw Error(
        fmt::format("{}: {} must be a contiguous tensor on {}, the communicator's device; "
                    "got {}",
                    collective, what, device_.str(),
                    tensor.defined() ? tensor.str() : std::string("an undefined tensor")));
  }
}

void DeviceCommunicator::all_reduce(Tensor& tensor, Reduction reduction) {
  check(tensor, "all_reduce", "the tensor");
  DLTensor view = detail::to_dlpack_view(tensor);
  backend_->all_reduce(static_cast<bp_communicator>(communicator_), &view, to_abi(reduction),
                       device_.index());
  count_write(tensor);
}

void DeviceCommunicator::broadcast(Tensor& tensor, int root) {
  check(tensor, "broadcast", "the tensor");
  DLTensor view = detail::to_dlpack_view(tensor);
  backend_->broadcast(static_cast<bp_communicator>(communicator_), &view, root, device_.index());
  count_write(tensor);
}

void DeviceCommunicator::all_gather(const Tensor& input, Tensor& output) {
  check(input, "all_gather", "the input");
  check(output, "all_gather", "the output");
  DLTensor output_view = detail::to_dlpack_view(output);
  backend_->all_gather(static_cast<bp_communicator>(communicator_), detail::to_dlpack_input(input),
                       &output_view, device_.index());
  count_write(output);
}

void DeviceCommunicator::reduce_scatter(const Tensor& input, Tensor& output, Reduction reduction) {
  check(input, "reduce_scatter", "the input");
  check(output, "reduce_scatter", "the output");
  DLTensor output_view = detail::to_dlpack_view(output);
  backend_->reduce_scatter(static_cast<bp_communicator>(communicator_),
                           detail::to_dlpack_input(input), &output_view, to_abi(reduction),
                           device_.index());
  count_write(output);
}

}  // namespace bp
