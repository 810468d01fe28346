// bp::distributed::DataParallel: data-parallel training over a process group, shaped like
// PyTorch's DistributedDataParallel. Each rank runs the same model on its own share of every
// batch; the wrapper starts every rank from rank 0's parameters and, during each backward pass,
// averages the gradients across ranks in buckets as soon as backward has produced them, so that
// the communication overlaps the rest of the pass. When backward() returns, every rank holds the
// same averaged gradients, and the same optimizer step keeps the parameters identical.
#pragma once

#include <backplane/distributed.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace bp::distributed {

struct DataParallelOptions {
  // The most gradient bytes one all_reduce carries: smaller buckets start sooner, larger ones
  // waste less on each collective's fixed cost.
  int64_t bucket_bytes = int64_t{1} << 20;
  // The rank whose parameters every rank starts from.
  int root = 0;
};

class DataParallel {
 public:
  // Broadcasts `parameters` (leaves that require grad, in the order the model uses them) and
  // `buffers` (state that is not trained, such as batch norm's running statistics) from the
  // root rank, and hooks the parameters' gradients. Every rank must pass tensors of the same
  // shapes, dtypes and order.
  DataParallel(ProcessGroup& group, std::vector<Tensor> parameters,
               DataParallelOptions options = {}, std::vector<Tensor> buffers = {});
  // Removes the hooks: later backward passes leave the gradients local.
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  const std::vector<Tensor>& parameters() const;

  // Gives every rank the root's buffers, as PyTorch's DistributedDataParallel does before each
  // forward pass: each rank's training steps update them from its own share of the batch.
  void broadcast_buffers();
  // How the parameters were split into buckets: each bucket's parameter indices, in the order
  // their all_reduce starts (the last parameters first, as backward reaches them first).
  std::vector<std::vector<size_t>> buckets() const;

  struct State;  // the buckets and their progress through a pass (data_parallel.cpp)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace bp::distributed
