// The caller's side of a collective: checking its arguments, choosing where MPI reads and
// writes (the caller's own host memory, or a contiguous host copy in the wire dtype), and
// handing the results back into the caller's tensors once MPI is done.
#pragma once

#include "operation.h"

#include <memory>

namespace bp::distributed::detail {

std::shared_ptr<Operation> prepare_all_reduce(Tensor& tensor, ReduceOp op);
std::shared_ptr<Operation> prepare_broadcast(Tensor& tensor, int root, bool is_root);
std::shared_ptr<Operation> prepare_all_gather(Tensor& output, const Tensor& input, int size);
std::shared_ptr<Operation> prepare_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                                                  int size);
std::shared_ptr<Operation> prepare_barrier();

// Puts a completed collective's results into its target: divides a mean, copies staged
// results back, and counts MPI's write into a target it wrote in place.
void hand_back(Operation& operation, int size);

}  // namespace bp::distributed::detail
