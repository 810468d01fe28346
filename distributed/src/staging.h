// The caller's side of a collective: checking its arguments, choosing the data's path (the
// device backend's collectives on the tensors themselves, where `device_collectives` allows and
// the backend has them; else MPI on the caller's own host memory, or on a contiguous host copy in
// the wire dtype), and handing the results back into the caller's tensors once it is done.
#pragma once

#include "operation.h"

#include <memory>

namespace bp::distributed::detail {

std::shared_ptr<Operation> prepare_all_reduce(Tensor& tensor, ReduceOp op, bool device_collectives);
std::shared_ptr<Operation> prepare_broadcast(Tensor& tensor, int root, bool is_root,
                                             bool device_collectives);
std::shared_ptr<Operation> prepare_all_gather(Tensor& output, const Tensor& input, int size,
                                              bool device_collectives);
std::shared_ptr<Operation> prepare_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                                                  int size, bool device_collectives);
std::shared_ptr<Operation> prepare_barrier();

// Puts a completed collective's results into its target: divides a mean, copies staged
// results back, and counts MPI's write into a target it wrote in place.
void hand_back(Operation& operation, int size);

}  // namespace bp::distributed::detail
