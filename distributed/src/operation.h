// One collective, from the call that submits it to the wait that hands its results back: the
// caller's tensors, the host buffers MPI reads and writes (the caller's own memory where it can
// be), and its state, which the group's thread advances and waiters watch.
#pragma once

#include "signature.h"

#include <backplane/distributed.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace bp::distributed::detail {

struct Operation {
  enum class State { Queued, Agreeing, Moving, Completed, Failed };

  ProcessGroup::Engine* engine = nullptr;  // the group's, which lives until the process exits
  Collective collective = Collective::Barrier;
  std::optional<ReduceOp> reduce_op;
  int root = -1;
  Signature signature;
  DataPath data_path = DataPath::InPlace;

  // The tensor whose contents the collective replaces (undefined for a barrier).
  Tensor target;
  // What MPI reads and writes: contiguous host tensors of the wire dtype. For all_reduce and
  // broadcast they are one tensor; in place, it is `target` itself.
  Tensor send;
  Tensor receive;

  std::mutex mutex;
  std::condition_variable changed;
  State state = State::Queued;
  std::chrono::steady_clock::time_point moving_since;
  std::optional<DistributedError> error;
  bool handed_back = false;  // the results are in `target` (done once, by the first waiter)

  // Called by the group's thread.
  void enter(State next);
  void fail(DistributedError failure);
};

}  // namespace bp::distributed::detail
