// The core's diagnostics: one line per message on stderr, "[backplane] warn: ...", shown when
// the message is at least as severe as BACKPLANE_LOG_LEVEL.
#pragma once

#include <fmt/format.h>

#include <string_view>
#include <utility>

namespace bp::detail {

// Ordered from most to least severe.
enum class LogLevel { Error, Warn, Info, Debug };

std::string_view log_level_name(LogLevel level);

// The registry sets this from BACKPLANE_LOG_LEVEL when plugins load; it is Warn until then.
void set_log_level(LogLevel level);
bool log_enabled(LogLevel level);

void write_log_line(LogLevel level, std::string_view message);

template <typename... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  // The check comes first so that a suppressed message costs no formatting.
  if (log_enabled(level)) write_log_line(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace bp::detail
