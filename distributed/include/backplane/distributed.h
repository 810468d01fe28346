// bp::distributed: collectives across the processes of one job, through MPI (docs/distributed.md).
// Every process of an `mpirun` job calls init(), then the same collectives in the same order with
// tensors of the same dtype and shape; each collective has a blocking form and an asynchronous
// one that returns a Work to wait on. Host tensors are handed to MPI in place; tensors on other
// devices, non-contiguous ones and 16-bit floating reductions go through a host copy.
#pragma once

#include <backplane/error.h>
#include <backplane/tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace bp::distributed {

// A collective that failed: a rank that did not reach it within the timeout, ranks that passed
// different arguments, or MPI reporting an error. Raised on every rank the failure reaches.
class DistributedError : public Error {
 public:
  DistributedError(const std::string& message, std::vector<int> ranks)
      : Error(ErrorCode::Backend, message), ranks_(std::move(ranks)) {}
  // The ranks the message names: those that did not arrive, or whose arguments differ.
  const std::vector<int>& ranks() const { return ranks_; }

 private:
  std::vector<int> ranks_;
};

// How the elements that meet are combined. Mean is the sum divided by the group's size, for
// floating dtypes only. On Bool, Sum and Max are a logical or, Min a logical and.
enum class ReduceOp { Sum, Mean, Max, Min };

// How a collective's data moves.
enum class DataPath {
  InPlace,            // through MPI, in the host tensor's own memory
  StagedThroughHost,  // through MPI, in a contiguous host copy written back when it completes
  DeviceCollectives   // through the device's backend (NCCL, for CUDA), in the tensor's memory
};

namespace detail {
struct Operation;
}

// The handle of an asynchronous collective. Its tensors must not be read or written until
// wait() returns. Copies share the one collective.
class Work {
 public:
  // Blocks until the collective completed and its results are in the caller's tensors, then
  // returns; throws DistributedError if it failed or did not complete within the group's
  // timeout. Later calls return at once (or throw the same error).
  void wait() const;
  // Whether wait() would return (or throw) without blocking.
  bool is_completed() const;
  // How the data reached MPI.
  DataPath data_path() const;

 private:
  friend class ProcessGroup;
  explicit Work(std::shared_ptr<detail::Operation> operation) : operation_(std::move(operation)) {}
  std::shared_ptr<detail::Operation> operation_;
};

// What init() reads from the environment (docs/distributed.md).
struct Options {
  // How long a rank waits for the others to reach a collective (and for a collective they all
  // entered to complete) before it raises DistributedError naming the ranks it waited for.
  // BACKPLANE_DISTRIBUTED_TIMEOUT, in seconds.
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  // Whether tensors on a device whose backend has collectives of its own (ABI 1.6) go through
  // them; otherwise they go through host memory. BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES.
  bool device_collectives = true;
};

// The processes of the job. One per process, made by init(). Collectives run one at a time, in
// the order they are called: the asynchronous forms on a thread of the group's own, so that
// they overlap the caller's work; a blocking one on the calling thread when nothing is queued
// before it (else it waits its turn).
class ProcessGroup {
 public:
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;
  ~ProcessGroup();

  int rank() const { return rank_; }
  int size() const { return size_; }
  const Options& options() const { return options_; }

  // Every rank's `tensor` becomes the elementwise `op` of all ranks' tensors.
  Work all_reduce_async(Tensor& tensor, ReduceOp op = ReduceOp::Sum);
  void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum);

  // Every rank's `tensor` becomes rank `root`'s.
  Work broadcast_async(Tensor& tensor, int root = 0);
  void broadcast(Tensor& tensor, int root = 0);

  // `output` (size() * input.size(0) rows, otherwise input's shape and dtype) becomes every
  // rank's `input`, in rank order along dimension 0.
  Work all_gather_async(Tensor& output, const Tensor& input);
  void all_gather(Tensor& output, const Tensor& input);

  // The `op` of all ranks' `input` (size() * output.size(0) rows), of which rank r keeps rows
  // [r * output.size(0), (r + 1) * output.size(0)) in `output`.
  Work reduce_scatter_async(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum);
  void reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum);

  // Completes once every rank has called it.
  Work barrier_async();
  void barrier();

  // The group (rank, size, timeout), then what bp::distributed::describe() says.
  std::vector<std::string> describe() const;

  struct Engine;  // the MPI side: communicators, the collectives' thread (process_group.cpp)

 private:
  friend ProcessGroup& init();
  explicit ProcessGroup(const Options& options);
  // Queues `operation` for the group's thread, or, when `blocking` and nothing is queued, runs
  // it on the calling thread.
  Work submit(std::shared_ptr<detail::Operation> operation, bool blocking);
  void check_root(int root) const;

  Options options_;
  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<Engine> engine_;
};

// The job's process group: made on the first call, from the launcher's environment (the rank
// and size MPI gives; one process alone without a launcher) and BACKPLANE_DISTRIBUTED_TIMEOUT;
// later calls return it. It lives until the process exits.
ProcessGroup& init();

// Whether init() has made the group.
bool is_initialized();

// Lines that describe the MPI library, whether it says it is CUDA-aware, and how each loaded
// device's tensors reach it (with the environment's options); for bp-info, and valid before
// init().
std::vector<std::string> describe();

// Options as the environment sets them; a malformed value is a bp::Error saying what to write.
Options options_from_environment();

}  // namespace bp::distributed
