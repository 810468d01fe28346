// Backend's calls into a plugin's collectives table (ABI 1.6), checked as its other calls are.
#include "runtime/backend.h"

#include <backplane/error.h>

#include <fmt/format.h>

namespace bp::detail {

namespace {

const bp_collectives& table_of(const bp_collectives* collectives, std::string_view backend) {
  if (collectives == nullptr) {
    throw Error(ErrorCode::Internal,
                fmt::format("backend '{}' has no collectives; asking it for one is a bug in "
                            "Backplane",
                            backend));
  }
  return *collectives;
}

}  // namespace

std::vector<uint8_t> Backend::make_communicator_id() const {
  const bp_collectives& table = table_of(collectives(), info_.name);
  check_callable(0, "make a communicator identifier");
  std::vector<uint8_t> id(table.communicator_id_size);
  check_status(table.make_communicator_id(id.data()), "make a communicator identifier", 0);
  return id;
}

bp_communicator Backend::create_communicator(int32_t device, int32_t rank, int32_t size,
                                             const std::vector<uint8_t>& id) const {
  const bp_collectives& table = table_of(collectives(), info_.name);
  const std::string action = fmt::format("create a communicator for rank {} of {}", rank, size);
  check_callable(device, action);
  if (id.size() != table.communicator_id_size) {
    throw Error(ErrorCode::InvalidArgument,
                fmt::format("backend '{}' cannot {}: its identifiers are {} bytes, not {}",
                            info_.name, action, table.communicator_id_size, id.size()));
  }
  bp_communicator communicator = nullptr;
  check_status(table.communicator_create(device, rank, size, id.data(), &communicator), action,
               device);
  return communicator;
}

void Backend::destroy_communicator(bp_communicator communicator) const noexcept {
  if (communicator == nullptr || has_shut_down() || collectives() == nullptr) return;
  collectives()->communicator_destroy(communicator);
}

void Backend::all_reduce(bp_communicator communicator, DLTensor* tensor, bp_reduction reduction,
                         int32_t device) const {
  const bp_collectives& table = table_of(collectives(), info_.name);
  check_callable(device, "all_reduce");
  check_status(table.all_reduce(communicator, tensor, reduction), "all_reduce", device);
}

void Backend::broadcast(bp_communicator communicator, DLTensor* tensor, int32_t root,
                        int32_t device) const {
  const bp_collectives& table = table_of(collectives(), info_.name);
  check_callable(device, "broadcast");
  check_status(table.broadcast(communicator, tensor, root), "broadcast", device);
}

void Backend::all_gather(bp_communicator communicator, const DLTensor* input, DLTensor* output,
                         int32_t device) const {
  const bp_collectives& table = table_of(collectives(), info_.name);
  check_callable(device, "all_gather");
  check_status(table.all_gather(communicator, input, output), "all_gather", device);
}

void Backend::reduce_scatter(bp_communicator communicator, const DLTensor* input, DLTensor* output,
                             bp_reduction reduction, int32_t device) const {
  const bp_collectives& table = table_of(collectives(), info_.name);
  check_callable(device, "reduce_scatter");
  check_status(table.reduce_scatter(communicator, input, output, reduction), "reduce_scatter",
               device);
}

}  // namespace bp::detail
