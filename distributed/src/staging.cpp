#include "staging.h"

#include "mpi_calls.h"

#include <backplane/backplane.h>
#include <backplane/device_collectives.h>

#include <fmt/format.h>

namespace bp::distributed::detail {

namespace {

void require_defined(const Tensor& tensor, std::string_view collective, std::string_view what) {
  if (!tensor.defined())
    throw Error(fmt::format("{}: {} is an undefined tensor", collective, what));
}

void require_reducible(DType dtype, ReduceOp op, std::string_view collective) {
  if (op == ReduceOp::Mean && !is_floating_point(dtype)) {
    throw Error(
        fmt::format("{}: ReduceOp::Mean needs a floating dtype, not {}; reduce with Sum "
                    "and divide, or convert the tensor first",
                    collective, dtype_name(dtype)));
  }
}

bool usable_in_place(const Tensor& tensor, DType wire) {
  return tensor.device().is_cpu() && tensor.is_contiguous() && tensor.dtype() == wire;
}

// A contiguous host tensor of `wire` dtype holding `tensor`'s values: moved first, then
// converted on the host, so that the device needs no conversion kernel.
Tensor staged_copy(const Tensor& tensor, DType wire) {
  const Tensor on_host = tensor.to(Device::cpu(), std::nullopt, /*non_blocking=*/false,
                                   /*copy=*/true);
  return on_host.to(wire).contiguous();
}

// `tensor` itself where MPI can work on it, else a staged copy (or, when `fill` is false, an
// uninitialised host tensor of its shape).
Tensor wire_buffer(const Tensor& tensor, DType wire, bool fill, DataPath& path) {
  if (usable_in_place(tensor, wire)) return tensor;
  path = DataPath::StagedThroughHost;
  return fill ? staged_copy(tensor, wire) : bp::empty(tensor.sizes(), wire, Device::cpu());
}

// Checks that `many` has `size` times `one`'s rows and otherwise its shape and dtype.
void require_rows(const Tensor& many, const Tensor& one, int size, std::string_view collective,
                  std::string_view many_name, std::string_view one_name) {
  const bool same_rest = many.dim() == one.dim() && many.dim() >= 1 &&
                         std::equal(many.sizes().begin() + 1, many.sizes().end(),
                                    one.sizes().begin() + 1, one.sizes().end());
  if (many.dtype() != one.dtype() || !same_rest || many.size(0) != size * one.size(0)) {
    throw Error(fmt::format(
        "{}: {} ({}) must have {} times the rows of {} ({}) and otherwise the same shape and "
        "dtype",
        collective, many_name, many.str(), size, one_name, one.str()));
  }
  if (one.numel() > kMaxCount) {
    throw Error(fmt::format("{}: {} has {} elements; each rank's part can have at most {}",
                            collective, one_name, one.numel(), kMaxCount));
  }
}

// Whether the device backend's collectives can take `tensors` (on one device, contiguous) for a
// collective that reduces or not.
bool on_device_collectives(bool allowed, std::initializer_list<const Tensor*> tensors,
                           bool reduces) {
  if (!allowed) return false;
  const Device device = (*tensors.begin())->device();
  for (const Tensor* tensor : tensors) {
    if (tensor->device() != device || !tensor->is_contiguous()) return false;
  }
  const std::optional<DeviceCollectives> collectives = DeviceCollectives::of(device);
  return collectives && (!reduces || collectives->reduces((*tensors.begin())->dtype()));
}

void run_on_device(Operation& operation, const Tensor& send, const Tensor& receive) {
  operation.data_path = DataPath::DeviceCollectives;
  operation.send = send;
  operation.receive = receive;
}

std::shared_ptr<Operation> make(Collective collective, std::optional<ReduceOp> op, int root,
                                const Tensor* described) {
  auto operation = std::make_shared<Operation>();
  operation->collective = collective;
  operation->reduce_op = op;
  operation->root = root;
  operation->signature = Signature::of(0, collective, described, op, root);
  return operation;
}

}  // namespace

std::shared_ptr<Operation> prepare_all_reduce(Tensor& tensor, ReduceOp op,
                                              bool device_collectives) {
  require_defined(tensor, "all_reduce", "the tensor");
  require_reducible(tensor.dtype(), op, "all_reduce");
  auto operation = make(Collective::AllReduce, op, -1, &tensor);
  operation->target = tensor;
  if (on_device_collectives(device_collectives, {&tensor}, true)) {
    run_on_device(*operation, tensor, tensor);
    return operation;
  }
  operation->receive =
      wire_buffer(tensor, wire_dtype(tensor.dtype(), true), true, operation->data_path);
  operation->send = operation->receive;
  return operation;
}

std::shared_ptr<Operation> prepare_broadcast(Tensor& tensor, int root, bool is_root,
                                             bool device_collectives) {
  require_defined(tensor, "broadcast", "the tensor");
  auto operation = make(Collective::Broadcast, std::nullopt, root, &tensor);
  operation->target = tensor;
  if (on_device_collectives(device_collectives, {&tensor}, false)) {
    run_on_device(*operation, tensor, tensor);
    return operation;
  }
  operation->receive = wire_buffer(tensor, tensor.dtype(), is_root, operation->data_path);
  operation->send = operation->receive;
  return operation;
}

std::shared_ptr<Operation> prepare_all_gather(Tensor& output, const Tensor& input, int size,
                                              bool device_collectives) {
  require_defined(output, "all_gather", "the output");
  require_defined(input, "all_gather", "the input");
  require_rows(output, input, size, "all_gather", "the output", "the input");
  auto operation = make(Collective::AllGather, std::nullopt, -1, &input);
  operation->target = output;
  if (on_device_collectives(device_collectives, {&input, &output}, false)) {
    run_on_device(*operation, input, output);
    return operation;
  }
  operation->send = wire_buffer(input, input.dtype(), true, operation->data_path);
  operation->receive = wire_buffer(output, output.dtype(), false, operation->data_path);
  return operation;
}

std::shared_ptr<Operation> prepare_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                                                  int size, bool device_collectives) {
  require_defined(output, "reduce_scatter", "the output");
  require_defined(input, "reduce_scatter", "the input");
  require_rows(input, output, size, "reduce_scatter", "the input", "the output");
  require_reducible(input.dtype(), op, "reduce_scatter");
  auto operation = make(Collective::ReduceScatter, op, -1, &input);
  operation->target = output;
  if (on_device_collectives(device_collectives, {&input, &output}, true)) {
    run_on_device(*operation, input, output);
    return operation;
  }
  const DType wire = wire_dtype(input.dtype(), true);
  operation->send = wire_buffer(input, wire, true, operation->data_path);
  operation->receive = wire_buffer(output, wire, false, operation->data_path);
  return operation;
}

std::shared_ptr<Operation> prepare_barrier() {
  return make(Collective::Barrier, std::nullopt, -1, nullptr);
}

void hand_back(Operation& operation, int size) {
  if (!operation.target.defined()) return;
  if (operation.reduce_op == ReduceOp::Mean) operation.receive.div_(size);
  if (operation.receive.impl() != operation.target.impl()) {
    // Converted on the host, then moved: the device needs no conversion kernel.
    operation.target.copy_(operation.receive.to(operation.target.dtype()));
  } else if (operation.reduce_op != ReduceOp::Mean) {
    operation.target.impl()->storage()->bump_version();
  }
  operation.send = Tensor();
  operation.receive = Tensor();
}

}  // namespace bp::distributed::detail
