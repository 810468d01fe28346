#include "support/log.h"

#include <atomic>
#include <cstdio>
#include <string>

namespace bp::detail {
namespace {

std::atomic<LogLevel> current_level{LogLevel::Warn};

}  // namespace

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "?";
}

void set_log_level(LogLevel level) { current_level.store(level, std::memory_order_relaxed); }

bool log_enabled(LogLevel level) { return level <= current_level.load(std::memory_order_relaxed); }

void write_log_line(LogLevel level, std::string_view message) {
  // One fwrite per line, so that lines from several threads do not interleave.
  std::string line = fmt::format("[backplane] {}: {}\n", log_level_name(level), message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace bp::detail
