// How this plugin runs oneDNN: one CPU engine, primitives made with a scratchpad that the caller
// provides (so that one cached primitive may run on several user threads at once), and OpenMP's
// thread count set to BACKPLANE_NUM_THREADS around every creation and execution.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>

namespace bp::cpu::onednn {

// The engine every primitive of this plugin is made for.
const dnnl::engine& engine();

// The attributes every primitive starts from: a user-managed scratchpad. With oneDNN's own
// scratchpad a primitive may only run on the thread that made it.
dnnl::primitive_attr base_attributes();

// The number of threads oneDNN runs on: the plugin's configured thread count.
int thread_count();

// While alive, the calling thread's OpenMP thread count is thread_count(): oneDNN (built on
// OpenMP) reads it both when it creates a primitive (to pick blocking) and when it runs one.
// The caller's own setting comes back afterwards.
class ThreadCountScope {
 public:
  ThreadCountScope();
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int previous_;
};

// Runs `primitive` (made with base_attributes(); `scratchpad` is its descriptor's
// scratchpad_desc()) on `args`, providing the scratchpad, and waits for it. Call inside a
// ThreadCountScope.
void execute(const dnnl::primitive& primitive, const dnnl::memory::desc& scratchpad,
             std::unordered_map<int, dnnl::memory> args);

}  // namespace bp::cpu::onednn
