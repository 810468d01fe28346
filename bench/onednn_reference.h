// The reference side of the oneDNN benchmarks: oneDNN called directly, as an application
// without Backplane would, on the same number of threads as the CPU backend and with the
// attributes the backend gives its primitives, so that both sides run the same primitive.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <omp.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unordered_map>
#include <vector>

namespace bench {

// The CPU backend's thread count: BACKPLANE_NUM_THREADS when it is a valid count, else every
// hardware thread (the backend warns about an invalid value; the benchmark just follows it).
inline int backend_thread_count() {
  const int fallback = static_cast<int>(std::thread::hardware_concurrency());
  const char* value = std::getenv("BACKPLANE_NUM_THREADS");
  if (value == nullptr) return fallback;
  int count = 0;
  const char* end = value + std::strlen(value);
  const auto [stop, error] = std::from_chars(value, end, count);
  return error == std::errc() && stop == end && count >= 1 && count <= 1024 ? count : fallback;
}

// One primitive, its engine and stream, and a scratchpad it owns (the backend's primitives use
// user-managed scratchpads too).
class RawPrimitive {
 public:
  RawPrimitive() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    omp_set_num_threads(backend_thread_count());
  }

  const dnnl::engine& engine() const { return engine_; }

  static dnnl::primitive_attr attributes() {
    dnnl::primitive_attr attributes;
    attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attributes;
  }

  void set(const dnnl::primitive& primitive, const dnnl::memory::desc& scratchpad) {
    primitive_ = primitive;
    scratchpad_bytes_.resize(scratchpad.get_size());
    scratchpad_ = dnnl::memory(scratchpad, engine_, scratchpad_bytes_.data());
  }

  dnnl::memory wrap(const dnnl::memory::desc& desc, void* data) const {
    return dnnl::memory(desc, engine_, data);
  }

  void run(std::unordered_map<int, dnnl::memory> args) {
    args.emplace(DNNL_ARG_SCRATCHPAD, scratchpad_);
    primitive_.execute(stream_, args);
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::primitive primitive_;
  std::vector<char> scratchpad_bytes_;
  dnnl::memory scratchpad_;
};

}  // namespace bench
