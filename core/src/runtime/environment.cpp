#include "runtime/environment.h"

#include <backplane/device.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace bp::detail {
namespace {

constexpr std::string_view kBackendsSyntax =
    "expected a comma-separated list of backend names, '*' for every backend and '!name' to "
    "leave one out, as in 'cpu,cuda' or '*,!opencl'";

// Values up to this many bytes are quoted whole; a longer one is cut to its first
// kQuotedPrefixBytes.
constexpr size_t kQuotedMaxBytes = 64;
constexpr size_t kQuotedPrefixBytes = 48;

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string to_lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

// Backend names are what bp-codegen accepts in a backend YAML: letters, digits and '_'.
bool is_backend_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '_';
  });
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The reason `item` is not a valid entry of BACKPLANE_BACKENDS, or nothing when it is. The
// only entry of a value is called "it", as the message quotes the value already.
std::optional<std::string> backend_item_problem(std::string_view item, bool only_entry) {
  if (item.empty()) return "an entry is empty";
  if (item == "*") return std::nullopt;
  std::string_view name = item.front() == '!' ? item.substr(1) : item;
  if (name == "*") return "'!*' would leave out every backend";
  if (!is_backend_name(name)) {
    return fmt::format("{} is not a backend name", only_entry ? "it" : quote_for_message(item));
  }
  return std::nullopt;
}

std::optional<std::string> read_variable(const char* name) {
  const char* value = secure_getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace

std::string quote_for_message(std::string_view value) {
  if (value.size() <= kQuotedMaxBytes) return fmt::format("'{}'", value);
  size_t cut = kQuotedPrefixBytes;
  while (cut > 0 && is_utf8_continuation(value[cut])) --cut;
  return fmt::format("'{}...' ({} bytes)", value.substr(0, cut), value.size());
}

bool BackendSelection::allows(std::string_view backend_name) const {
  if (std::find(excluded.begin(), excluded.end(), backend_name) != excluded.end()) return false;
  return all || std::find(included.begin(), included.end(), backend_name) != included.end();
}

std::vector<std::string> BackendSelection::mentioned_names() const {
  std::vector<std::string> names = included;
  names.insert(names.end(), excluded.begin(), excluded.end());
  return names;
}

BackendSelectionParse parse_backend_selection(std::string_view value) {
  BackendSelection selection;
  bool star = false;
  const std::vector<std::string_view> items = split(value, ',');
  for (std::string_view raw_item : items) {
    std::string_view item = trim(raw_item);
    if (auto problem = backend_item_problem(item, items.size() == 1)) {
      return {BackendSelection{},
              fmt::format("BACKPLANE_BACKENDS={} is malformed ({}): {}; loading every backend",
                          quote_for_message(value), *problem, kBackendsSyntax)};
    }
    if (item == "*") {
      star = true;
    } else if (item.front() == '!') {
      selection.excluded.push_back(to_lower(item.substr(1)));
    } else {
      selection.included.push_back(to_lower(item));
    }
  }
  // "!opencl" alone means "everything but opencl", as "*,!opencl" does.
  selection.all = star || selection.included.empty();
  for (const std::string& name : selection.included) {
    if (std::find(selection.excluded.begin(), selection.excluded.end(), name) !=
        selection.excluded.end()) {
      return {selection, fmt::format("BACKPLANE_BACKENDS={} both selects and excludes {}; "
                                     "the exclusion wins, so it does not load",
                                     quote_for_message(value), quote_for_message(name))};
    }
  }
  return {selection, std::nullopt};
}

std::vector<std::string> parse_plugin_path(std::string_view value) {
  std::vector<std::string> entries;
  for (std::string_view entry : split(value, ':')) {
    if (!entry.empty()) entries.emplace_back(entry);
  }
  return entries;
}

LogLevelParse parse_log_level(std::string_view value) {
  const std::string lower = to_lower(trim(value));
  for (LogLevel level : {LogLevel::Error, LogLevel::Warn, LogLevel::Info, LogLevel::Debug}) {
    if (lower == log_level_name(level)) return {level, std::nullopt};
  }
  return {LogLevel::Warn,
          fmt::format("BACKPLANE_LOG_LEVEL={} is not a log level: use error, warn, info or "
                      "debug; using warn",
                      quote_for_message(value))};
}

FallbackPolicyParse parse_fallback_policy(std::string_view value) {
  const std::string lower = to_lower(trim(value));
  if (lower == "off") return {FallbackPolicy::Off, std::nullopt};
  if (lower == Device::kHostName) return {FallbackPolicy::Cpu, std::nullopt};
  return {FallbackPolicy::Off,
          fmt::format("BACKPLANE_FALLBACK={} is not a fallback policy: use cpu (run ops a "
                      "backend lacks on the CPU) or off; using off",
                      quote_for_message(value))};
}

namespace {

// A variable that takes 1 or 0; any other value is `refusal`, which names the value, and 0.
SwitchParse parse_switch(std::string_view value, fmt::format_string<std::string> refusal) {
  const std::string_view trimmed = trim(value);
  if (trimmed == "1" || trimmed == "0") return {trimmed == "1", std::nullopt};
  return {false, fmt::format(refusal, quote_for_message(value))};
}

}  // namespace

ValidationModeParse parse_validate(std::string_view value) {
  const std::string lower = to_lower(trim(value));
  if (lower == "0") return {ValidationMode::Off, std::nullopt};
  if (lower == "1") return {ValidationMode::Check, std::nullopt};
  if (lower == "compare") return {ValidationMode::Compare, std::nullopt};
  return {ValidationMode::Off,
          fmt::format("BACKPLANE_VALIDATE={} is not a validation setting: use 1 (check that every "
                      "kernel writes all of its outputs, none of its inputs and nothing past "
                      "their end), compare (those checks, and every kernel's results against the "
                      "host's) or 0; validation stays off",
                      quote_for_message(value))};
}

SwitchParse parse_validate_fatal(std::string_view value) {
  return parse_switch(value,
                      "BACKPLANE_VALIDATE_FATAL={} is not a setting: use 1 (a finding of "
                      "BACKPLANE_VALIDATE throws a bp::Error) or 0 (it is logged); using 0");
}

LoaderEnvironment read_loader_environment() {
  LoaderEnvironment environment;
  if (auto level = read_variable("BACKPLANE_LOG_LEVEL")) {
    LogLevelParse parsed = parse_log_level(*level);
    environment.log_level = parsed.level;
    if (parsed.warning) environment.warnings.push_back(*parsed.warning);
  }
  environment.backends_value = read_variable("BACKPLANE_BACKENDS");
  if (environment.backends_value) {
    BackendSelectionParse parsed = parse_backend_selection(*environment.backends_value);
    environment.backends = parsed.selection;
    if (parsed.warning) environment.warnings.push_back(*parsed.warning);
  }
  if (auto fallback = read_variable("BACKPLANE_FALLBACK")) {
    FallbackPolicyParse parsed = parse_fallback_policy(*fallback);
    environment.fallback = parsed.policy;
    if (parsed.warning) environment.warnings.push_back(*parsed.warning);
  }
  if (auto device = read_variable("BACKPLANE_DEFAULT_DEVICE")) {
    environment.default_device = std::string(trim(*device));
  }
  environment.trace_path = read_variable("BACKPLANE_TRACE");
  if (auto validate = read_variable("BACKPLANE_VALIDATE")) {
    ValidationModeParse parsed = parse_validate(*validate);
    environment.validate = parsed.mode;
    if (parsed.warning) environment.warnings.push_back(*parsed.warning);
  }
  if (auto fatal = read_variable("BACKPLANE_VALIDATE_FATAL")) {
    SwitchParse parsed = parse_validate_fatal(*fatal);
    environment.validate_fatal = parsed.on;
    if (parsed.warning) environment.warnings.push_back(*parsed.warning);
    if (environment.validate_fatal && environment.validate == ValidationMode::Off) {
      environment.warnings.push_back(
          "BACKPLANE_VALIDATE_FATAL=1 has no effect without BACKPLANE_VALIDATE=1 or compare: set "
          "both to stop at a kernel's first finding");
    }
  }
  if (auto path = read_variable("BACKPLANE_PLUGIN_PATH")) {
    environment.plugin_path = parse_plugin_path(*path);
  }
  return environment;
}

}  // namespace bp::detail
