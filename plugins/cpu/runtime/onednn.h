// How this plugin runs oneDNN: one CPU engine, primitives made with a scratchpad that the caller
// provides (so that one cached primitive may run on several user threads at once), and OpenMP's
// thread count set to BACKPLANE_NUM_THREADS around every creation and execution.
#pragma once

#include <backplane/sdk/dtype.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <unordered_map>

namespace bp::cpu::onednn {

// The engine every primitive of this plugin is made for.
const dnnl::engine& engine();

// The attributes every primitive starts from: a user-managed scratchpad. With oneDNN's own
// scratchpad a primitive may only run on the thread that made it.
dnnl::primitive_attr base_attributes();

// The number of threads oneDNN runs on: the plugin's configured thread count.
int thread_count();

// While alive, the calling thread's OpenMP thread count is `threads` (thread_count() unless
// given): oneDNN (built on OpenMP) reads it both when it creates a primitive (to pick blocking)
// and when it runs one. The caller's own setting comes back afterwards.
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads = thread_count());
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int previous_;
  int threads_;
};

// Which floating dtypes this CPU's oneDNN implements one kind of primitive for: float32
// always, float16 and bfloat16 where the CPU has the instructions they need. `describe(type)`
// creates a small primitive descriptor of that kind for `type`; it is tried once for each
// 16-bit type, when the TypeSupport is made.
class TypeSupport {
 public:
  explicit TypeSupport(const std::function<void(dnnl::memory::data_type)>& describe);
  bool implements(DType dtype) const;
  // `dtype` where implemented, else float32, which every kind implements.
  DType compute_dtype(DType dtype) const { return implements(dtype) ? dtype : DType::Float32; }

 private:
  bool float16_ = false;
  bool bfloat16_ = false;
};

// Runs `primitive` (made with base_attributes(); `scratchpad` is its descriptor's
// scratchpad_desc()) on `args`, providing the scratchpad, and waits for it. Call inside a
// ThreadCountScope.
void execute(const dnnl::primitive& primitive, const dnnl::memory::desc& scratchpad,
             std::unordered_map<int, dnnl::memory> args);

}  // namespace bp::cpu::onednn
