// The process group: MPI's initialisation and finalisation, the thread that runs the collectives
// in call order, and the submission and completion of each collective.
#include "agreement.h"
#include "mpi_calls.h"
#include "operation.h"
#include "staging.h"

#include <backplane/backplane.h>
#include <backplane/device_collectives.h>
#include <backplane/distributed.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <thread>

namespace bp::distributed {

using detail::Collective;
using detail::Operation;

namespace {

using Clock = std::chrono::steady_clock;

void* address_of(const Tensor& t) {
  return static_cast<char*>(t.impl()->storage()->data()) + t.storage_offset() * t.element_size();
}

// Polls `ready` for a moment before the caller goes to sleep: a small collective takes a few
// microseconds, and waking a sleeping thread takes tens.
template <typename Ready>
void poll_briefly(const Ready& ready) {
  const auto deadline = Clock::now() + std::chrono::microseconds(50);
  while (!ready() && Clock::now() < deadline) std::this_thread::yield();
}

}  // namespace

struct ProcessGroup::Engine {
  Engine(ProcessGroup& group, const Options& options);
  ~Engine();

  void enqueue(std::shared_ptr<Operation> operation);
  // Runs `operation` on the calling thread, if no collective is queued or running; whether it
  // did. A blocking collective so skips the hand-over to the group's thread and back.
  bool run_inline(Operation& operation);
  // Ends the process, saying why, when a caller's collective has been in MPI longer than the
  // timeout: the call cannot return while MPI holds it, and the process must not hang.
  void watch_inline();
  void run_collectives();
  // Runs one collective, and keeps a span of it for BACKPLANE_TRACE.
  void run(Operation& operation);
  // run's work: the agreement, then the data.
  void agree_and_move(Operation& operation);
  void move_data(Operation& operation);
  void move_on_device(Operation& operation);
  // This process's communicator for `device`, made on its first collective: collective over
  // the ranks, which agreed on that collective already.
  DeviceCommunicator& communicator_for(Device device);
  // The reason the group cannot be used any more, once something broke it.
  std::optional<std::string> broken_reason() const {
    const std::lock_guard lock(mutex);
    return broken;
  }
  void break_group(const std::string& reason) {
    const std::lock_guard lock(mutex);
    if (!broken) broken = reason;
  }

  ProcessGroup& group;
  const std::chrono::milliseconds timeout;
  bool initialized_mpi = false;
  MPI_Comm control = MPI_COMM_NULL;  // the agreements' messages
  MPI_Comm data = MPI_COMM_NULL;     // the collectives themselves

  mutable std::mutex mutex;  // guards queue, stopping and broken
  std::condition_variable queued;
  std::deque<std::shared_ptr<Operation>> queue;
  std::atomic<size_t> queued_count{0};  // queue.size(), polled without the mutex
  bool stopping = false;
  std::optional<std::string> broken;
  std::atomic<bool> in_mpi_call{false};
  int64_t finished = 0;  // collectives run to their end, under `mutex`
  // Held by whichever thread runs a collective: the group's, or a caller's (run_inline).
  std::timed_mutex running;
  std::mutex inline_mutex;                // guards inline_operation
  Operation* inline_operation = nullptr;  // the collective a caller is running, if any
  // Touched by the group's thread only.
  std::map<std::pair<int16_t, int16_t>, std::unique_ptr<DeviceCommunicator>> communicators;
  int64_t submitted = 0;  // collectives submitted so far; touched by callers under `mutex`
  std::thread thread;
};

ProcessGroup::Engine::Engine(ProcessGroup& group, const Options& options)
    : group(group), timeout(options.timeout) {
  int already = 0;
  detail::check_mpi(MPI_Initialized(&already), "MPI_Initialized");
  int provided = 0;
  if (already) {
    detail::check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  } else {
    detail::check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided),
                      "MPI_Init_thread");
    initialized_mpi = true;
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    throw DistributedError(
        "MPI was initialised without thread support (MPI_THREAD_SERIALIZED or more is needed, "
        "since collectives run on a thread of their own): call MPI_Init_thread with "
        "MPI_THREAD_SERIALIZED, or let bp::distributed::init() initialise MPI",
        {});
  }
  detail::check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &control), "MPI_Comm_dup");
  detail::check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &data), "MPI_Comm_dup");
  // Errors come back as codes, which become DistributedError, instead of aborting the job.
  detail::check_mpi(MPI_Comm_set_errhandler(control, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  detail::check_mpi(MPI_Comm_set_errhandler(data, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  detail::check_mpi(MPI_Comm_rank(data, &group.rank_), "MPI_Comm_rank");
  detail::check_mpi(MPI_Comm_size(data, &group.size_), "MPI_Comm_size");
  thread = std::thread([this] { run_collectives(); });
}

ProcessGroup::Engine::~Engine() {
  {
    const std::lock_guard lock(mutex);
    stopping = true;
  }
  queued.notify_all();
  // A thread stuck in a collective whose peers died never returns: it is left behind, and MPI
  // is not finalised, which would wait for those peers too.
  const bool stuck = broken_reason().has_value() && in_mpi_call.load();
  if (stuck) {
    thread.detach();
    return;
  }
  thread.join();
  if (broken_reason()) return;
  communicators.clear();
  MPI_Comm_free(&control);
  MPI_Comm_free(&data);
  if (initialized_mpi) MPI_Finalize();
}

void ProcessGroup::Engine::enqueue(std::shared_ptr<Operation> operation) {
  {
    const std::lock_guard lock(mutex);
    if (stopping) throw DistributedError("the process group is shutting down", {});
    operation->signature.sequence = ++submitted;
    queue.push_back(std::move(operation));
    queued_count.store(queue.size(), std::memory_order_release);
  }
  queued.notify_one();
}

void ProcessGroup::Engine::run_collectives() {
  // How often the group's thread, idle or waiting for a caller's collective, checks that one.
  constexpr std::chrono::milliseconds kWatchInterval{200};
  for (;;) {
    poll_briefly([this] { return queued_count.load(std::memory_order_acquire) != 0; });
    std::shared_ptr<Operation> operation;
    {
      std::unique_lock lock(mutex);
      while (!stopping && queue.empty()) {
        if (queued.wait_for(lock, kWatchInterval) == std::cv_status::timeout) {
          lock.unlock();
          watch_inline();
          lock.lock();
        }
      }
      if (queue.empty()) return;
      operation = std::move(queue.front());
      queue.pop_front();
      queued_count.store(queue.size(), std::memory_order_release);
    }
    std::unique_lock running_lock(running, std::defer_lock);
    while (!running_lock.try_lock_for(kWatchInterval)) watch_inline();
    run(*operation);
    running_lock.unlock();
    const std::lock_guard lock(mutex);
    ++finished;
  }
}

bool ProcessGroup::Engine::run_inline(Operation& operation) {
  std::unique_lock running_lock(running, std::try_to_lock);
  if (!running_lock.owns_lock()) return false;
  {
    const std::lock_guard lock(mutex);
    if (stopping || finished != submitted) return false;  // earlier collectives come first
    operation.signature.sequence = ++submitted;
  }
  {
    const std::lock_guard lock(inline_mutex);
    inline_operation = &operation;
  }
  run(operation);
  {
    const std::lock_guard lock(inline_mutex);
    inline_operation = nullptr;
  }
  const std::lock_guard lock(mutex);
  ++finished;
  return true;
}

void ProcessGroup::Engine::watch_inline() {
  const std::lock_guard guard(inline_mutex);
  if (inline_operation == nullptr) return;
  const std::lock_guard lock(inline_operation->mutex);
  if (inline_operation->state != Operation::State::Moving ||
      Clock::now() - inline_operation->moving_since <= timeout) {
    return;
  }
  std::fprintf(stderr,
               "[backplane] error: bp::distributed: %s: every rank entered it, but it did not "
               "complete within %g s (BACKPLANE_DISTRIBUTED_TIMEOUT), and its blocking call "
               "cannot return while MPI holds it: a rank likely died during it. Ending this "
               "process (rank %d) rather than leaving it hanging.\n",
               inline_operation->signature.describe().c_str(),
               std::chrono::duration<double>(timeout).count(), group.rank_);
  std::fflush(stderr);
  std::abort();
}

void ProcessGroup::Engine::run(Operation& operation) {
  const auto start = Clock::now();
  agree_and_move(operation);
  if (bp::tracing()) {
    const std::lock_guard lock(operation.mutex);
    bp::trace_span(
        detail::name_of(operation.collective), "collective", start,
        {{"sequence", std::to_string(operation.signature.sequence)},
         {"tensor", operation.signature.describe_arguments()},
         {"data path", std::string(detail::name_of(operation.data_path))},
         {"ranks", std::to_string(group.size_)},
         {"outcome",
          operation.state == Operation::State::Failed ? operation.error->what() : "completed"}});
  }
}

void ProcessGroup::Engine::agree_and_move(Operation& operation) {
  if (const auto reason = broken_reason()) {
    operation.fail(
        DistributedError(fmt::format("{} cannot run: an earlier collective broke the group ({})",
                                     operation.signature.describe(), *reason),
                         {}));
    return;
  }
  operation.enter(Operation::State::Agreeing);
  try {
    const auto disagreement =
        detail::agree(control, group.rank_, group.size_, operation.signature, timeout);
    if (disagreement) {
      if (disagreement->breaks_group) break_group(disagreement->message);
      operation.fail(DistributedError(disagreement->message, disagreement->ranks));
      return;
    }
    operation.enter(Operation::State::Moving);
    in_mpi_call = true;
    move_data(operation);
    in_mpi_call = false;
    operation.enter(Operation::State::Completed);
  } catch (const DistributedError& error) {
    in_mpi_call = false;
    break_group(error.what());
    operation.fail(DistributedError(
        fmt::format("{}: {}", operation.signature.describe(), error.what()), error.ranks()));
  } catch (const std::exception& error) {  // a device backend's failure, or out of memory
    in_mpi_call = false;
    break_group(error.what());
    operation.fail(
        DistributedError(fmt::format("{}: {}", operation.signature.describe(), error.what()), {}));
  }
}

DeviceCommunicator& ProcessGroup::Engine::communicator_for(Device device) {
  std::unique_ptr<DeviceCommunicator>& communicator =
      communicators[{device.type(), device.index()}];
  if (communicator) return *communicator;
  const std::optional<DeviceCollectives> collectives = DeviceCollectives::of(device);
  std::vector<uint8_t> id;
  if (group.rank_ == 0) id = collectives->make_communicator_id();
  int length = static_cast<int>(id.size());
  detail::check_mpi(MPI_Bcast(&length, 1, MPI_INT, 0, control), "MPI_Bcast");
  id.resize(static_cast<size_t>(length));
  detail::check_mpi(MPI_Bcast(id.data(), length, MPI_BYTE, 0, control), "MPI_Bcast");
  communicator = collectives->create_communicator(device, group.rank_, group.size_, id);
  return *communicator;
}

void ProcessGroup::Engine::move_on_device(Operation& operation) {
  DeviceCommunicator& communicator = communicator_for(operation.receive.device());
  const auto reduction = [&] {
    switch (*operation.reduce_op) {
      case ReduceOp::Max: return Reduction::Max;
      case ReduceOp::Min: return Reduction::Min;
      case ReduceOp::Sum:
      case ReduceOp::Mean: return Reduction::Sum;
    }
    return Reduction::Sum;
  };
  switch (operation.collective) {
    case Collective::AllReduce: communicator.all_reduce(operation.receive, reduction()); return;
    case Collective::Broadcast: communicator.broadcast(operation.receive, operation.root); return;
    case Collective::AllGather: communicator.all_gather(operation.send, operation.receive); return;
    case Collective::ReduceScatter:
      communicator.reduce_scatter(operation.send, operation.receive, reduction());
      return;
    case Collective::Barrier: return;
  }
}

void ProcessGroup::Engine::move_data(Operation& operation) {
  if (operation.data_path == DataPath::DeviceCollectives) {
    move_on_device(operation);
    return;
  }
  const DType wire = operation.receive.defined() ? operation.receive.dtype() : kUInt8;
  const MPI_Datatype type = detail::mpi_datatype(wire);
  const auto element_size = static_cast<int64_t>(bp::element_size(wire));
  switch (operation.collective) {
    case Collective::Barrier: return;  // the agreement is itself a barrier
    case Collective::AllReduce:
    case Collective::Broadcast: {
      auto* bytes = static_cast<char*>(address_of(operation.receive));
      const int64_t count = operation.receive.numel();
      for (int64_t done = 0; done < count; done += detail::kMaxCount) {
        const int chunk = static_cast<int>(std::min(detail::kMaxCount, count - done));
        void* chunk_address = bytes + done * element_size;
        if (operation.collective == Collective::AllReduce) {
          detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, chunk_address, chunk, type,
                                          detail::mpi_op(*operation.reduce_op, wire), data),
                            "MPI_Allreduce");
        } else {
          detail::check_mpi(MPI_Bcast(chunk_address, chunk, type, operation.root, data),
                            "MPI_Bcast");
        }
      }
      return;
    }
    case Collective::AllGather: {
      const int count = static_cast<int>(operation.send.numel());
      detail::check_mpi(MPI_Allgather(address_of(operation.send), count, type,
                                      address_of(operation.receive), count, type, data),
                        "MPI_Allgather");
      return;
    }
    case Collective::ReduceScatter: {
      const int count = static_cast<int>(operation.receive.numel());
      detail::check_mpi(MPI_Reduce_scatter_block(address_of(operation.send),
                                                 address_of(operation.receive), count, type,
                                                 detail::mpi_op(*operation.reduce_op, wire), data),
                        "MPI_Reduce_scatter_block");
      return;
    }
  }
}

namespace detail {

void Operation::enter(State next) {
  {
    const std::lock_guard lock(mutex);
    if (state == State::Failed) return;  // a waiter gave up on it already
    state = next;
    if (next == State::Moving) moving_since = std::chrono::steady_clock::now();
  }
  changed.notify_all();
}

void Operation::fail(DistributedError failure) {
  {
    const std::lock_guard lock(mutex);
    if (state == State::Failed) return;
    state = State::Failed;
    error = std::move(failure);
  }
  changed.notify_all();
}

}  // namespace detail

ProcessGroup::ProcessGroup(const Options& options)
    : options_(options), engine_(std::make_unique<Engine>(*this, options)) {}

ProcessGroup::~ProcessGroup() = default;

Work ProcessGroup::submit(std::shared_ptr<Operation> operation, bool blocking) {
  operation->engine = engine_.get();
  operation->signature.data_path = static_cast<int32_t>(operation->data_path);
  if (!blocking || !engine_->run_inline(*operation)) engine_->enqueue(operation);
  return Work(std::move(operation));
}

Work ProcessGroup::all_reduce_async(Tensor& tensor, ReduceOp op) {
  return submit(detail::prepare_all_reduce(tensor, op, options_.device_collectives), false);
}

void ProcessGroup::all_reduce(Tensor& tensor, ReduceOp op) {
  submit(detail::prepare_all_reduce(tensor, op, options_.device_collectives), true).wait();
}

void ProcessGroup::check_root(int root) const {
  if (root < 0 || root >= size_) {
    throw Error(fmt::format("broadcast: root {} is not a rank of this group of {} (0 to {})", root,
                            size_, size_ - 1));
  }
}

Work ProcessGroup::broadcast_async(Tensor& tensor, int root) {
  check_root(root);
  return submit(detail::prepare_broadcast(tensor, root, rank_ == root, options_.device_collectives),
                false);
}

void ProcessGroup::broadcast(Tensor& tensor, int root) {
  check_root(root);
  submit(detail::prepare_broadcast(tensor, root, rank_ == root, options_.device_collectives), true)
      .wait();
}

Work ProcessGroup::all_gather_async(Tensor& output, const Tensor& input) {
  return submit(detail::prepare_all_gather(output, input, size_, options_.device_collectives),
                false);
}

void ProcessGroup::all_gather(Tensor& output, const Tensor& input) {
  submit(detail::prepare_all_gather(output, input, size_, options_.device_collectives), true)
      .wait();
}

Work ProcessGroup::reduce_scatter_async(Tensor& output, const Tensor& input, ReduceOp op) {
  return submit(
      detail::prepare_reduce_scatter(output, input, op, size_, options_.device_collectives), false);
}

void ProcessGroup::reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op) {
  submit(detail::prepare_reduce_scatter(output, input, op, size_, options_.device_collectives),
         true)
      .wait();
}

Work ProcessGroup::barrier_async() { return submit(detail::prepare_barrier(), false); }

void ProcessGroup::barrier() { submit(detail::prepare_barrier(), true).wait(); }

std::vector<std::string> ProcessGroup::describe() const {
  std::vector<std::string> lines{
      fmt::format("rank {} of {}; a rank waits {} s for the others (BACKPLANE_DISTRIBUTED_TIMEOUT)",
                  rank_, size_, std::chrono::duration<double>(options_.timeout).count())};
  for (std::string& line : distributed::describe()) lines.push_back(std::move(line));
  return lines;
}

// Work

void Work::wait() const {
  Operation& operation = *operation_;
  poll_briefly([this] { return is_completed(); });
  std::unique_lock lock(operation.mutex);
  for (;;) {
    switch (operation.state) {
      case Operation::State::Completed:
        if (!operation.handed_back) {
          detail::hand_back(operation, operation.engine->group.size());
          operation.handed_back = true;
        }
        return;
      case Operation::State::Failed: throw *operation.error;
      case Operation::State::Moving:
        if (Clock::now() - operation.moving_since > operation.engine->timeout) {
          const std::string message = fmt::format(
              "{}: every rank entered it, but it did not complete within {} s "
              "(BACKPLANE_DISTRIBUTED_TIMEOUT): a rank likely died during it; the group cannot "
              "be used any more",
              operation.signature.describe(),
              std::chrono::duration<double>(operation.engine->timeout).count());
          operation.engine->break_group(message);
          operation.state = Operation::State::Failed;
          operation.error = DistributedError(message, {});
          continue;
        }
        break;
      case Operation::State::Queued:
        if (const auto reason = operation.engine->broken_reason()) {
          operation.state = Operation::State::Failed;
          operation.error = DistributedError(
              fmt::format("{} cannot run: an earlier collective broke the group ({})",
                          operation.signature.describe(), *reason),
              {});
          continue;
        }
        break;
      case Operation::State::Agreeing: break;
    }
    operation.changed.wait_for(lock, std::chrono::milliseconds(100));
  }
}

bool Work::is_completed() const {
  const std::lock_guard lock(operation_->mutex);
  return operation_->state == Operation::State::Completed ||
         operation_->state == Operation::State::Failed;
}

DataPath Work::data_path() const { return operation_->data_path; }

// init

namespace {

std::atomic<bool> initialized{false};

}  // namespace

ProcessGroup& init() {
  static const std::unique_ptr<ProcessGroup> world = [] {
    // The core's state is made first, so that at exit it is torn down after the group, whose
    // thread may still hold tensors until it is joined.
    bp::devices();
    return std::unique_ptr<ProcessGroup>(new ProcessGroup(options_from_environment()));
  }();
  initialized = true;
  return *world;
}

bool is_initialized() { return initialized; }

}  // namespace bp::distributed
