// The BACKPLANE_* variables the loader reads, parsed by pure functions that the tests call
// directly. A bad value never stops loading: it becomes a warning and the default applies.
#pragma once

#include "support/log.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bp::detail {

// `value` in single quotes for a message; a value longer than a line is cut short, with its
// length, so that junk in a variable cannot flood stderr.
std::string quote_for_message(std::string_view value);

// BACKPLANE_BACKENDS: "cpu,cuda", "*" (the default), "*,!opencl".
struct BackendSelection {
  bool all = true;                    // "*" was given, or no name was
  std::vector<std::string> included;  // names given without "!"
  std::vector<std::string> excluded;  // names given as "!name"

  bool allows(std::string_view backend_name) const;
  // Every name the value mentions, for the check that each one exists.
  std::vector<std::string> mentioned_names() const;
};

struct BackendSelectionParse {
  BackendSelection selection;
  std::optional<std::string> warning;  // set when the value was malformed and "*" applies
};

BackendSelectionParse parse_backend_selection(std::string_view value);

// BACKPLANE_PLUGIN_PATH: ":"-separated folders or files; empty entries are ignored.
std::vector<std::string> parse_plugin_path(std::string_view value);

struct LogLevelParse {
  LogLevel level = LogLevel::Warn;
  std::optional<std::string> warning;  // set when the value was not a level and warn applies
};

LogLevelParse parse_log_level(std::string_view value);

// BACKPLANE_FALLBACK: what happens to an op that the tensors' backend does not implement.
enum class FallbackPolicy {
  Off,  // a bp::Error that names the op and the backend (the default)
  Cpu,  // the CPU backend runs it on copies of the tensors, which are copied back
};

struct FallbackPolicyParse {
  FallbackPolicy policy = FallbackPolicy::Off;
  std::optional<std::string> warning;  // set when the value was neither cpu nor off
};

FallbackPolicyParse parse_fallback_policy(std::string_view value);

// BACKPLANE_VALIDATE: 0 (off), 1 (check every kernel call) or compare (check it, and compare
// its results with the host's).
enum class ValidationMode { Off, Check, Compare };

struct ValidationModeParse {
  ValidationMode mode = ValidationMode::Off;
  std::optional<std::string> warning;  // set when the value was none of those, and 0 applies
};

ValidationModeParse parse_validate(std::string_view value);

// BACKPLANE_VALIDATE_FATAL: 1 (on) or 0 (off).
struct SwitchParse {
  bool on = false;
  std::optional<std::string> warning;  // set when the value was neither 1 nor 0, and 0 applies
};

SwitchParse parse_validate_fatal(std::string_view value);

// Everything the loader takes from the environment, read once.
struct LoaderEnvironment {
  std::optional<std::string> backends_value;  // BACKPLANE_BACKENDS as given, for messages
  BackendSelection backends;
  std::vector<std::string> plugin_path;
  LogLevel log_level = LogLevel::Warn;
  FallbackPolicy fallback = FallbackPolicy::Off;
  // BACKPLANE_DEFAULT_DEVICE as given, trimmed; the registry resolves it once plugins loaded.
  std::optional<std::string> default_device;
  // BACKPLANE_TRACE: the file to write a trace of dispatched ops to.
  std::optional<std::string> trace_path;
  // BACKPLANE_VALIDATE: check every kernel call (dispatch/validation.h).
  ValidationMode validate = ValidationMode::Off;
  // BACKPLANE_VALIDATE_FATAL=1: a finding is a bp::Error.
  bool validate_fatal = false;
  std::vector<std::string> warnings;
};

// Reads the variables with secure_getenv, so that a setuid program ignores them. An empty
// variable counts as unset.
LoaderEnvironment read_loader_environment();

}  // namespace bp::detail
