// The CPU backend's worker threads: a fixed pool that large kernels split their work across.
// The core dispatches from many user threads at once, so every call here is thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace bp::cpu {

// fn(begin, end) for one chunk of the index range [0, n).
using ChunkFn = std::function<void(int64_t begin, int64_t end)>;

class ThreadPool {
 public:
  // `thread_count` threads work on each parallel_for: the calling thread and thread_count - 1
  // workers of the pool.
  explicit ThreadPool(int thread_count);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int thread_count() const { return thread_count_; }

  // Calls fn over [0, n) in chunks of at least `grain` indices, on the pool's threads and the
  // calling one, and returns when every chunk has finished. The first exception a chunk throws
  // is rethrown here once all chunks are done. Runs fn(0, n) on the calling thread when there
  // is too little work for two chunks, the pool has one thread, it is shut down, or the caller
  // is itself running a chunk (a nested call: waiting for the pool from inside it could
  // deadlock).
  void parallel_for(int64_t n, int64_t grain, const ChunkFn& fn);

  // Joins the workers; later calls run inline. Calling it again does nothing.
  void shut_down();

 private:
  struct Job;

  void work();

  const int thread_count_;
  std::mutex mutex_;  // guards queue_ and stopping_
  std::condition_variable wake_;
  // One entry per worker asked to help with a job; a job outlives the caller's wait only in
  // entries that no worker has taken yet, whose chunks are then all claimed already.
  std::deque<std::shared_ptr<Job>> queue_;
  // queue_.size(), for workers to poll without the mutex before they sleep.
  std::atomic<size_t> queued_{0};
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// BACKPLANE_NUM_THREADS's value (`value` may be null: unset) as a thread count; the default,
// std::thread::hardware_concurrency(), with a warning (bp::plugin::warn) for a value that is not
// a positive integer.
int thread_count_from(const char* value);

// The plugin's thread count: BACKPLANE_NUM_THREADS as thread_count_from reads it, once per
// process. The pool and oneDNN both run on this many threads.
int configured_thread_count();

// parallel_for on the plugin's pool, which starts on first use with as many threads as
// BACKPLANE_NUM_THREADS says.
void parallel_for(int64_t n, int64_t grain, const ChunkFn& fn);

// The plugin's shutdown callback: joins the pool's workers, so that none is left running while
// the process exits.
void shut_down_thread_pool() noexcept;

}  // namespace bp::cpu
