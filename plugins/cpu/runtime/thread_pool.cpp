// The thread pool (thread_pool.h): its jobs and workers, BACKPLANE_NUM_THREADS's parsing, and
// the plugin's one pool, started on first use.
#include "runtime/thread_pool.h"

#include <backplane/sdk/log.hpp>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <system_error>

namespace bp::cpu {

namespace {

// Whether the current thread is running chunks: set on pool workers for their lifetime, and on
// a calling thread while it runs chunks itself. A pthread key rather than a thread_local: this
// library is dlopen'ed, so a thread_local would live in dynamic TLS, which LeakSanitizer (GCC
// 12) misreads once glibc has moved a thread's TLS vector for libraries loaded later (OpenCL's),
// crashing its check at exit.
class RunningChunksFlag {
 public:
  RunningChunksFlag() {
    if (const int error = pthread_key_create(&key_, nullptr); error != 0) {
      throw std::system_error(error, std::generic_category(), "pthread_key_create");
    }
  }
  bool is_set() const { return pthread_getspecific(key_) != nullptr; }
  void set(bool running) const { pthread_setspecific(key_, running ? this : nullptr); }

 private:
  pthread_key_t key_{};
};

const RunningChunksFlag& running_chunks() {
  static const RunningChunksFlag flag;  // the key is never deleted: the library stays loaded
  return flag;
}

// Far more than any host has cores; a larger value is surely a typo.
constexpr int kMaxThreads = 1024;

// How long a thread polls before it sleeps on a condition variable: longer than the gap between
// a model's consecutive kernel calls, shorter than a time slice. Waking a sleeping thread costs
// tens of microseconds, as much as a whole small kernel.
constexpr std::chrono::microseconds kSpinBeforeSleep{50};

void pause_briefly() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls `ready` for up to kSpinBeforeSleep; whether it became true.
template <class Ready>
bool spin_until(const Ready& ready) {
  constexpr int kPollsPerClockRead = 64;
  const auto deadline = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  for (;;) {
    for (int poll = 0; poll < kPollsPerClockRead; ++poll) {
      if (ready()) return true;
      pause_briefly();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

}  // namespace

// One parallel_for call. Chunks are claimed through next_chunk, so whichever threads turn up
// (the caller always does) share them and the call finishes even if every worker is busy.
struct ThreadPool::Job {
  Job(int64_t n, int64_t chunk_count, const ChunkFn& fn)
      : n(n), chunk_count(chunk_count), fn(fn), unfinished(chunk_count) {}

  // Claims and runs chunks until none are left.
  void run_chunks() {
    for (int64_t chunk = next_chunk++; chunk < chunk_count; chunk = next_chunk++) {
      try {
        fn(chunk_begin(chunk), chunk_begin(chunk + 1));
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
      }
      if (unfinished.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        const std::lock_guard lock(mutex);
        finished.notify_all();
      }
    }
  }

  // Equal chunks, the first n % chunk_count of them one index longer.
  int64_t chunk_begin(int64_t chunk) const {
    return chunk * (n / chunk_count) + std::min(chunk, n % chunk_count);
  }

  const int64_t n;
  const int64_t chunk_count;
  const ChunkFn& fn;  // read only while a chunk is unfinished, so the caller's fn is alive
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> unfinished;
  std::mutex mutex;  // guards error, and orders the last chunk's notify with the caller's wait
  std::condition_variable finished;
  std::exception_ptr error;
};

ThreadPool::ThreadPool(int thread_count) : thread_count_(std::max(thread_count, 1)) {
  workers_.reserve(static_cast<size_t>(thread_count_ - 1));
  for (int i = 1; i < thread_count_; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() { shut_down(); }

void ThreadPool::parallel_for(int64_t n, int64_t grain, const ChunkFn& fn) {
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunk_count = std::min<int64_t>(thread_count_, n / grain);
  if (chunk_count < 2 || running_chunks().is_set()) {
    if (n > 0) fn(0, n);
    return;
  }
  std::shared_ptr<Job> job;
  {
    const std::lock_guard lock(mutex_);
    if (!stopping_) {
      job = std::make_shared<Job>(n, chunk_count, fn);
      queue_.insert(queue_.end(), static_cast<size_t>(chunk_count - 1), job);
      queued_.store(queue_.size(), std::memory_order_release);
    }
  }
  if (!job) {
    fn(0, n);
    return;
  }
  wake_.notify_all();
  running_chunks().set(true);
  job->run_chunks();
  running_chunks().set(false);
  const auto all_finished = [&] { return job->unfinished.load(std::memory_order_acquire) == 0; };
  if (!spin_until(all_finished)) {
    std::unique_lock lock(job->mutex);
    job->finished.wait(lock, all_finished);
  }
  if (job->error) std::rethrow_exception(job->error);
}

void ThreadPool::work() {
  running_chunks().set(true);
  for (;;) {
    spin_until([this] { return queued_.load(std::memory_order_acquire) != 0; });
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Jobs still queued are finished by their callers, who run chunks too.
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      queued_.store(queue_.size(), std::memory_order_release);
    }
    job->run_chunks();
  }
}

void ThreadPool::shut_down() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

int thread_count_from(const char* value) {
  const int fallback = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (value == nullptr) return fallback;
  const char* const end = value + std::strlen(value);
  int count = 0;
  const auto [stop, error] = std::from_chars(value, end, count);
  if (error == std::errc() && stop == end && count >= 1 && count <= kMaxThreads) return count;
  plugin::warn(std::string("BACKPLANE_NUM_THREADS='") + value +
               "' is not a thread count from 1 to " + std::to_string(kMaxThreads) +
               "; using the default, " + std::to_string(fallback));
  return fallback;
}

int configured_thread_count() {
  static const int count = thread_count_from(secure_getenv("BACKPLANE_NUM_THREADS"));
  return count;
}

namespace {

std::mutex pool_mutex;
// Never deleted: the core may call shutdown from its own exit-time teardown, after this
// library's static destructors have run, and a process that never calls it simply exits with
// the idle workers.
ThreadPool* pool = nullptr;

ThreadPool& plugin_pool() {
  const std::lock_guard lock(pool_mutex);
  if (pool == nullptr) pool = new ThreadPool(configured_thread_count());
  return *pool;
}

}  // namespace

void parallel_for(int64_t n, int64_t grain, const ChunkFn& fn) {
  plugin_pool().parallel_for(n, grain, fn);
}

void shut_down_thread_pool() noexcept {
  const std::lock_guard lock(pool_mutex);
  if (pool == nullptr) return;
  try {
    pool->shut_down();
  } catch (const std::system_error& e) {  // join failing leaves nothing better to do than say so
    plugin::warn(std::string("joining its threads failed: ") + e.what());
  }
}

}  // namespace bp::cpu
