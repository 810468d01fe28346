// BACKPLANE_TRACE: every kernel op dispatched, with its device, thread, start and duration,
// written at exit as a Chrome trace (JSON "X" events), which chrome://tracing and Perfetto
// open. The generated kernel wrappers (Kernels.h) hold an OpTraceScope around each call; with
// tracing off it costs one load and one branch on the way in and one compare on the way out.
#pragma once

#include <backplane/device.h>
#include <core_generated/OpTable.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bp::detail {

// Set while plugins load, before any kernel can be found, when tracing starts.
extern constinit std::atomic<bool> g_tracing;

// Nanoseconds on the steady clock since tracing started.
int64_t trace_clock_ns() noexcept;
// Keeps one finished op for the trace; called only while tracing.
void record_traced_op(OpId op, Device device, int64_t start_ns) noexcept;
// Keeps one finished span of other work for the trace (bp::trace_span); nothing while not
// tracing.
void record_traced_span(std::string_view name, std::string_view category,
                        std::chrono::steady_clock::time_point start,
                        const std::vector<std::pair<std::string, std::string>>& args) noexcept;

class OpTraceScope {
 public:
  OpTraceScope(OpId op, Device device) noexcept : op_(op), device_(device) {
    if (g_tracing.load(std::memory_order_relaxed)) [[unlikely]]
      start_ns_ = trace_clock_ns();
  }
  ~OpTraceScope() {
    if (start_ns_ >= 0) [[unlikely]]
      record_traced_op(op_, device_, start_ns_);
  }
  OpTraceScope(const OpTraceScope&) = delete;
  OpTraceScope& operator=(const OpTraceScope&) = delete;

 private:
  OpId op_;
  Device device_;
  int64_t start_ns_ = -1;  // -1: not traced
};

// Starts tracing into `path`, or, when it is a link, into the file the link leads to (which
// need not exist yet). Whether that file can be written is probed now, so that a path that
// cannot be written is known at once. Returns why it could not start, leaving tracing off.
// Once started, tracing writes what it traced at exit, from an exit handler of its own,
// through a temporary file renamed over the path; a failure then is logged.
std::optional<std::string> start_tracing(const std::string& path);

}  // namespace bp::detail
