// The cpu backend's thread pool on its own (plugins/cpu/runtime/thread_pool.cpp is compiled
// into this suite): chunking, exceptions, nesting, concurrent callers and shutdown.
#include "runtime/thread_pool.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace bp::cpu {
namespace {

using Chunk = std::pair<int64_t, int64_t>;

// The chunks parallel_for hands out, sorted, and the threads that ran them.
struct ChunkLog {
  std::mutex mutex;
  std::vector<Chunk> chunks;
  std::set<std::thread::id> threads;

  ChunkFn recorder() {
    return [this](int64_t begin, int64_t end) {
      const std::lock_guard lock(mutex);
      chunks.emplace_back(begin, end);
      threads.insert(std::this_thread::get_id());
    };
  }
  std::vector<Chunk> sorted() {
    std::sort(chunks.begin(), chunks.end());
    return chunks;
  }
};

TEST_CASE("parallel_for splits the range into one chunk per thread, covering it exactly") {
  ThreadPool pool(4);
  ChunkLog log;
  pool.parallel_for(1002, 10, log.recorder());
  CHECK(log.sorted() == std::vector<Chunk>{{0, 251}, {251, 502}, {502, 752}, {752, 1002}});
}

TEST_CASE("parallel_for keeps chunks at least a grain long") {
  ThreadPool pool(4);
  ChunkLog log;
  pool.parallel_for(25, 10, log.recorder());
  CHECK(log.sorted() == std::vector<Chunk>{{0, 13}, {13, 25}});
}

TEST_CASE("parallel_for runs inline below two grains, with one thread, and for nothing") {
  ThreadPool pool(4);
  ChunkLog small;
  pool.parallel_for(19, 10, small.recorder());
  CHECK(small.sorted() == std::vector<Chunk>{{0, 19}});
  CHECK(small.threads == std::set{std::this_thread::get_id()});

  ThreadPool single(1);
  ChunkLog large;
  single.parallel_for(1000, 1, large.recorder());
  CHECK(large.sorted() == std::vector<Chunk>{{0, 1000}});

  ChunkLog empty;
  pool.parallel_for(0, 1, empty.recorder());
  CHECK(empty.chunks.empty());
}

TEST_CASE("an exception in a chunk is rethrown on the calling thread after every chunk ends") {
  ThreadPool pool(4);
  std::atomic<int> finished{0};
  CHECK_THROWS_WITH_AS(pool.parallel_for(400, 1,
                                         [&](int64_t begin, int64_t) {
                                           if (begin == 100) throw std::invalid_argument("bad");
                                           ++finished;
                                         }),
                       "bad", std::invalid_argument);
  CHECK(finished == 3);
  // The pool still works afterwards.
  ChunkLog log;
  pool.parallel_for(400, 1, log.recorder());
  CHECK(log.chunks.size() == 4);
}

TEST_CASE("a parallel_for inside a chunk runs inline instead of waiting for the pool") {
  ThreadPool pool(2);
  std::atomic<int64_t> inner_chunks{0};
  std::atomic<int64_t> covered{0};
  pool.parallel_for(4, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      pool.parallel_for(1000, 1, [&](int64_t inner_begin, int64_t inner_end) {
        ++inner_chunks;
        covered += inner_end - inner_begin;
      });
    }
  });
  CHECK(inner_chunks == 4);
  CHECK(covered == 4000);
}

TEST_CASE("several threads can share the pool at once") {
  ThreadPool pool(3);
  constexpr int kCallers = 6;
  std::vector<int64_t> totals(kCallers);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int repeat = 0; repeat < 200; ++repeat) {
        std::atomic<int64_t> total{0};
        pool.parallel_for(3000, 100, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) total += i;
        });
        totals[static_cast<size_t>(c)] += total;
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (const int64_t total : totals) CHECK(total == 200 * (2999 * 3000 / 2));
}

TEST_CASE("after shut_down, parallel_for still runs, inline") {
  ThreadPool pool(4);
  pool.shut_down();
  pool.shut_down();  // a second call does nothing
  ChunkLog log;
  pool.parallel_for(1000, 1, log.recorder());
  CHECK(log.sorted() == std::vector<Chunk>{{0, 1000}});
}

TEST_CASE("BACKPLANE_NUM_THREADS: a positive integer, else the hardware's thread count") {
  const int fallback = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  CHECK(thread_count_from(nullptr) == fallback);
  CHECK(thread_count_from("3") == 3);
  CHECK(thread_count_from("1") == 1);
  for (const char* bad : {"", "0", "-2", "two", "4x", " 4", "99999999999", "100000"}) {
    CAPTURE(bad);
    CHECK(thread_count_from(bad) == fallback);  // and a warning on stderr
  }
}

}  // namespace
}  // namespace bp::cpu
