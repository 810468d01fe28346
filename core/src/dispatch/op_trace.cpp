#include "dispatch/op_trace.h"

#include "support/log.h"

#include <fmt/format.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace bp::detail {

constinit std::atomic<bool> g_tracing{false};

namespace {

struct TracedOp {
  OpId op;
  Device device;
  int64_t start_ns;
  int64_t end_ns;
};

// A span that is not a kernel op (bp::trace_span).
struct TracedSpan {
  std::string name;
  std::string category;
  std::vector<std::pair<std::string, std::string>> args;
  int64_t start_ns;
  int64_t end_ns;
};

// One thread's ops and spans. Its lock is taken by that thread for each op and by the writer at
// exit, so it is never contended while ops run.
struct ThreadTrace {
  explicit ThreadTrace(uint32_t id) : id(id) {}
  const uint32_t id;
  std::mutex mutex;
  std::vector<TracedOp> ops;
  std::vector<TracedSpan> spans;
};

struct TraceState {
  std::mutex mutex;    // guards threads
  std::string path;    // as BACKPLANE_TRACE names it, for messages
  std::string target;  // the file written: path with its links followed
  std::chrono::steady_clock::time_point epoch;
  // Never freed: a thread that ends leaves its ops for the writer.
  std::vector<ThreadTrace*> threads;
};

TraceState& state() {
  static TraceState* const trace = new TraceState();
  return *trace;
}

ThreadTrace& this_thread_trace() {
  thread_local ThreadTrace* trace = [] {
    TraceState& s = state();
    std::lock_guard lock(s.mutex);
    s.threads.push_back(new ThreadTrace(static_cast<uint32_t>(s.threads.size() + 1)));
    return s.threads.back();
  }();
  return *trace;
}

// Microseconds with nanosecond digits, as the trace format counts time.
std::string microseconds(int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

// `text` as the inside of a JSON string.
std::string json_escaped(std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      escaped += '\\';
      escaped += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      escaped += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string trace_json(const TraceState& s) {
  const int pid = static_cast<int>(getpid());
  std::string json = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  const auto add_event = [&](std::string_view name, std::string_view category, int64_t start_ns,
                             int64_t end_ns, uint32_t thread, const std::string& args) {
    json += fmt::format(
        "{}{{\"name\": \"{}\", \"cat\": \"{}\", \"ph\": \"X\", \"ts\": {}, \"dur\": {}, "
        "\"pid\": {}, \"tid\": {}, \"args\": {{{}}}}}",
        first ? "" : ",\n", json_escaped(name), json_escaped(category), microseconds(start_ns),
        microseconds(end_ns - start_ns), pid, thread, args);
    first = false;
  };
  for (ThreadTrace* thread : s.threads) {
    std::lock_guard lock(thread->mutex);
    for (const TracedOp& traced : thread->ops) {
      add_event(kOpNames[static_cast<size_t>(traced.op)], "kernel", traced.start_ns, traced.end_ns,
                thread->id, fmt::format("\"device\": \"{}\"", traced.device.str()));
    }
    for (const TracedSpan& span : thread->spans) {
      std::string args;
      for (const auto& [name, value] : span.args) {
        args += fmt::format("{}\"{}\": \"{}\"", args.empty() ? "" : ", ", json_escaped(name),
                            json_escaped(value));
      }
      add_event(span.name, span.category, span.start_ns, span.end_ns, thread->id, args);
    }
  }
  return json + "\n]}\n";
}

// As many links as Linux follows in resolving one path before it reports a loop (ELOOP).
constexpr int kMaxLinksFollowed = 40;

// The file a trace at `path` goes to: `path`, made absolute against the working directory as it
// is now, with the links it names followed, a relative one from the link's own folder. Nothing
// when the links lead round in a loop or run longer than the system would follow.
std::optional<std::filesystem::path> trace_target(const std::string& path) {
  std::error_code error;
  std::filesystem::path target = std::filesystem::absolute(path, error);
  if (error) target = path;
  for (int followed = 0; followed <= kMaxLinksFollowed; ++followed) {
    if (!std::filesystem::is_symlink(std::filesystem::symlink_status(target, error))) {
      return target;
    }
    const std::filesystem::path next = std::filesystem::read_symlink(target, error);
    if (error) return target;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return std::nullopt;
}

// Writes what was traced to the path tracing started with (through a temporary file renamed
// over it) and turns tracing off; failures are logged. Registered by start_tracing as an exit
// handler of its own.
void finish_tracing() noexcept {
  if (!g_tracing.exchange(false)) return;
  TraceState& s = state();
  try {
    std::string json;
    {
      std::lock_guard lock(s.mutex);
      json = trace_json(s);
    }
    const std::string temporary = s.target + ".partial";
    {
      std::ofstream out(temporary, std::ios::trunc | std::ios::binary);
      out << json;
      if (!out.flush()) {
        throw std::system_error(errno, std::generic_category(), "writing " + temporary);
      }
    }
    std::filesystem::rename(temporary, s.target);
  } catch (const std::exception& e) {
    log(LogLevel::Error, "BACKPLANE_TRACE: the trace could not be written to {}: {}", s.path,
        e.what());
  }
}

}  // namespace

int64_t trace_clock_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              state().epoch)
      .count();
}

void record_traced_op(OpId op, Device device, int64_t start_ns) noexcept {
  const int64_t end_ns = trace_clock_ns();
  try {
    ThreadTrace& trace = this_thread_trace();
    std::lock_guard lock(trace.mutex);
    trace.ops.push_back({op, device, start_ns, end_ns});
  } catch (...) {
    // Out of memory for the trace: the op itself succeeded, and the trace loses this entry.
  }
}

void record_traced_span(std::string_view name, std::string_view category,
                        std::chrono::steady_clock::time_point start,
                        const std::vector<std::pair<std::string, std::string>>& args) noexcept {
  if (!g_tracing.load(std::memory_order_relaxed)) return;
  const int64_t end_ns = trace_clock_ns();
  const int64_t start_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(start - state().epoch).count();
  try {
    ThreadTrace& trace = this_thread_trace();
    std::lock_guard lock(trace.mutex);
    trace.spans.push_back(
        {std::string(name), std::string(category), args, std::max<int64_t>(start_ns, 0), end_ns});
  } catch (...) {
    // Out of memory for the trace: the traced work itself went on, and the trace loses it.
  }
}

std::optional<std::string> start_tracing(const std::string& path) {
  // Links are followed, so that the trace replaces the file a link points to (or creates it,
  // when the link dangles) and the link stays a link.
  const std::optional<std::filesystem::path> target = trace_target(path);
  if (!target) {
    return fmt::format(
        "BACKPLANE_TRACE='{}' is a symbolic link that leads round in a loop, or "
        "through more than {} links, without reaching a file; no trace is kept. "
        "Point the link at a file",
        path, kMaxLinksFollowed);
  }
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(*target, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    return fmt::format(
        "BACKPLANE_TRACE='{}' is not a regular file (a folder, a device or a "
        "pipe); no trace is kept. Name a file, which the trace replaces at exit",
        path);
  }
  // Probed through the temporary file alone: a trace already at the path is left as it is
  // until this run's replaces it.
  const std::string temporary = target->string() + ".partial";
  {
    std::ofstream probe(temporary, std::ios::trunc);
    if (!probe) {
      return fmt::format(
          "BACKPLANE_TRACE='{}' cannot be written ({}); no trace is kept. Name a "
          "file in a folder that exists and that this process may write to",
          path, std::error_code(errno, std::generic_category()).message());
    }
  }
  std::filesystem::remove(temporary, error);
  TraceState& s = state();
  s.path = path;
  s.target = target->string();
  s.epoch = std::chrono::steady_clock::now();
  g_tracing.store(true, std::memory_order_relaxed);
  std::atexit(finish_tracing);
  return std::nullopt;
}

}  // namespace bp::detail
