// The plugin's oneDNN engine, base attributes, thread count scope, per-dtype support probe and
// execution with a caller's scratchpad (onednn.h), and the one-time check that the oneDNN loaded
// at run time runs on OpenMP.
#include "runtime/onednn.h"

#include "runtime/scratch_buffer.h"
#include "runtime/thread_pool.h"

#include <backplane/sdk/log.hpp>
#include <backplane/sdk/status.hpp>

#include <omp.h>

#include <optional>
#include <string>
#include <utility>

namespace bp::cpu::onednn {
namespace {

// Debian's oneDNN runs on OpenMP, which is what the build checked; a library swapped in at run
// time might not be, and then BACKPLANE_NUM_THREADS cannot reach it. Said once.
void check_threading_runtime() {
  static const bool checked = [] {
    const dnnl_version_t* version = dnnl_version();
    if (version->cpu_runtime != DNNL_RUNTIME_OMP) {
      plugin::warn("the oneDNN loaded (" + std::to_string(version->major) + "." +
                   std::to_string(version->minor) + "." + std::to_string(version->patch) +
                   ") does not run on OpenMP, so BACKPLANE_NUM_THREADS does not govern its thread "
                   "count; install Debian's libdnnl2");
    }
    return true;
  }();
  (void)checked;
}

}  // namespace

const dnnl::engine& engine() {
  // Never destroyed: primitives cached until exit refer to it.
  static const dnnl::engine* const cpu_engine = [] {
    check_threading_runtime();
    return new dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return *cpu_engine;
}

dnnl::primitive_attr base_attributes() {
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attributes;
}

int thread_count() { return configured_thread_count(); }

ThreadCountScope::ThreadCountScope(int threads)
    : previous_(omp_get_max_threads()), threads_(threads) {
  if (previous_ != threads_) omp_set_num_threads(threads_);
}

ThreadCountScope::~ThreadCountScope() {
  if (previous_ != threads_) omp_set_num_threads(previous_);
}

TypeSupport::TypeSupport(const std::function<void(dnnl::memory::data_type)>& describe) {
  auto implemented = [&](dnnl::memory::data_type type) {
    try {
      const ThreadCountScope threads;
      describe(type);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  };
  float16_ = implemented(dnnl::memory::data_type::f16);
  bfloat16_ = implemented(dnnl::memory::data_type::bf16);
}

bool TypeSupport::implements(DType dtype) const {
  switch (dtype) {
    case DType::Float32: return true;
    case DType::Float16: return float16_;
    case DType::BFloat16: return bfloat16_;
    default: return false;
  }
}

void execute(const dnnl::primitive& primitive, const dnnl::memory::desc& scratchpad,
             std::unordered_map<int, dnnl::memory> args) {
  const size_t scratchpad_bytes = scratchpad.get_size();
  std::optional<ScratchBuffer> buffer;
  if (scratchpad_bytes > 0) {
    buffer.emplace(scratchpad_bytes);
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad, engine(), buffer->data()));
  }
  // A CPU stream is cheap to make; one per call keeps streams off every thread but the
  // caller's, which oneDNN does not promise to allow.
  try {
    dnnl::stream stream(engine());
    primitive.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    throw plugin::Error(BP_STATUS_DEVICE_ERROR,
                        std::string("oneDNN failed running a primitive: ") + e.what());
  }
}

}  // namespace bp::cpu::onednn
