// BACKPLANE_BACKENDS, BACKPLANE_PLUGIN_PATH, BACKPLANE_LOG_LEVEL, BACKPLANE_FALLBACK and
// BACKPLANE_VALIDATE(_FATAL), parsed as the loader parses them.
#include "runtime/environment.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using bp::detail::LogLevel;
using bp::detail::parse_backend_selection;
using bp::detail::parse_log_level;
using bp::detail::parse_plugin_path;

TEST_CASE("BACKPLANE_BACKENDS=cpu selects the cpu backend only") {
  const auto parsed = parse_backend_selection("cpu");
  CHECK_FALSE(parsed.warning);
  CHECK(parsed.selection.allows("cpu"));
  CHECK_FALSE(parsed.selection.allows("cuda"));
}

TEST_CASE("BACKPLANE_BACKENDS lists several backends in any case and with spaces") {
  const auto parsed = parse_backend_selection("CUDA, cpu");
  CHECK_FALSE(parsed.warning);
  CHECK(parsed.selection.allows("cuda"));
  CHECK(parsed.selection.allows("cpu"));
  CHECK_FALSE(parsed.selection.allows("opencl"));
  CHECK(parsed.selection.mentioned_names() == std::vector<std::string>{"cuda", "cpu"});
}

TEST_CASE("BACKPLANE_BACKENDS=* selects every backend") {
  const auto parsed = parse_backend_selection("*");
  CHECK_FALSE(parsed.warning);
  CHECK(parsed.selection.allows("cpu"));
  CHECK(parsed.selection.allows("vendor_npu"));
  CHECK(parsed.selection.mentioned_names().empty());
}

TEST_CASE("BACKPLANE_BACKENDS of '*' and '!cpu' selects every backend but cpu") {
  const auto parsed = parse_backend_selection("*,!cpu");
  CHECK_FALSE(parsed.warning);
  CHECK_FALSE(parsed.selection.allows("cpu"));
  CHECK(parsed.selection.allows("cuda"));
  CHECK(parsed.selection.mentioned_names() == std::vector<std::string>{"cpu"});
}

TEST_CASE("BACKPLANE_BACKENDS with exclusions alone means every backend but those") {
  const auto parsed = parse_backend_selection("!opencl");
  CHECK_FALSE(parsed.warning);
  CHECK_FALSE(parsed.selection.allows("opencl"));
  CHECK(parsed.selection.allows("cpu"));
}

TEST_CASE("an exclusion wins over the same name included, with a warning") {
  const auto parsed = parse_backend_selection("cpu,!cpu");
  CHECK_FALSE(parsed.selection.allows("cpu"));
  REQUIRE(parsed.warning);
  CHECK(*parsed.warning ==
        "BACKPLANE_BACKENDS='cpu,!cpu' both selects and excludes 'cpu'; the "
        "exclusion wins, so it does not load");
}

TEST_CASE("a malformed BACKPLANE_BACKENDS warns with the syntax and selects every backend") {
  for (const char* value : {"cpu;cuda", "cpu,,cuda", "cpu,", "!", "!*", "cu da"}) {
    CAPTURE(value);
    const auto parsed = parse_backend_selection(value);
    REQUIRE(parsed.warning);
    CHECK(parsed.warning->find(std::string("BACKPLANE_BACKENDS='") + value + "' is malformed") !=
          std::string::npos);
    CHECK(parsed.warning->find("'cpu,cuda' or '*,!opencl'") != std::string::npos);
    CHECK(parsed.selection.allows("cpu"));
    CHECK(parsed.selection.allows("cuda"));
  }
}

TEST_CASE("a malformed BACKPLANE_BACKENDS of one entry is quoted once") {
  const auto parsed = parse_backend_selection("cu da");
  REQUIRE(parsed.warning);
  CHECK(parsed.warning->starts_with(
      "BACKPLANE_BACKENDS='cu da' is malformed (it is not a backend name): expected"));
}

TEST_CASE("a long malformed BACKPLANE_BACKENDS is quoted once, cut short with its length") {
  const std::string long_entry(5000, '-');
  const auto alone = parse_backend_selection(long_entry);
  REQUIRE(alone.warning);
  CHECK(alone.warning->starts_with("BACKPLANE_BACKENDS='" + std::string(48, '-') +
                                   "...' (5000 bytes) is malformed (it is not a backend name)"));
  CHECK(alone.warning->size() < 300);

  const auto listed = parse_backend_selection("cpu," + long_entry);
  REQUIRE(listed.warning);
  CHECK(listed.warning->starts_with("BACKPLANE_BACKENDS='cpu," + std::string(44, '-') +
                                    "...' (5004 bytes) is malformed ('" + std::string(48, '-') +
                                    "...' (5000 bytes) is not a backend name)"));
  CHECK(listed.warning->size() < 400);
}

TEST_CASE("a long value is cut short between UTF-8 characters, never inside one") {
  // 47 bytes, then 'é' (2 bytes) across the cut after 48.
  const std::string value = std::string(47, 'a') + "\xc3\xa9" + std::string(100, 'b');
  CHECK(bp::detail::quote_for_message(value) == "'" + std::string(47, 'a') + "...' (149 bytes)");
  CHECK(bp::detail::quote_for_message("cpu") == "'cpu'");
  CHECK(bp::detail::quote_for_message(std::string(64, 'c')) == "'" + std::string(64, 'c') + "'");
}

TEST_CASE("BACKPLANE_PLUGIN_PATH is split at ':' with empty entries dropped") {
  CHECK(parse_plugin_path("/opt/a:/opt/b/libbackplane_x.so::/opt/c:") ==
        std::vector<std::string>{"/opt/a", "/opt/b/libbackplane_x.so", "/opt/c"});
  CHECK(parse_plugin_path("").empty());
}

TEST_CASE("BACKPLANE_LOG_LEVEL takes the four levels in any case") {
  CHECK(parse_log_level("error").level == LogLevel::Error);
  CHECK(parse_log_level("warn").level == LogLevel::Warn);
  CHECK(parse_log_level("INFO").level == LogLevel::Info);
  CHECK(parse_log_level("debug").level == LogLevel::Debug);
  CHECK_FALSE(parse_log_level("debug").warning);
}

TEST_CASE("a bad BACKPLANE_LOG_LEVEL warns with the levels and keeps warn") {
  const auto parsed = parse_log_level("verbose");
  CHECK(parsed.level == LogLevel::Warn);
  REQUIRE(parsed.warning);
  CHECK(*parsed.warning ==
        "BACKPLANE_LOG_LEVEL='verbose' is not a log level: use error, warn, info or debug; "
        "using warn");
}

TEST_CASE("BACKPLANE_FALLBACK takes cpu or off in any case") {
  using bp::detail::FallbackPolicy;
  using bp::detail::parse_fallback_policy;
  CHECK(parse_fallback_policy("cpu").policy == FallbackPolicy::Cpu);
  CHECK(parse_fallback_policy(" CPU ").policy == FallbackPolicy::Cpu);
  CHECK(parse_fallback_policy("off").policy == FallbackPolicy::Off);
  CHECK_FALSE(parse_fallback_policy("cpu").warning);
}

TEST_CASE("a bad BACKPLANE_FALLBACK warns with the choices and keeps off") {
  const auto parsed = bp::detail::parse_fallback_policy("host");
  CHECK(parsed.policy == bp::detail::FallbackPolicy::Off);
  REQUIRE(parsed.warning);
  CHECK(*parsed.warning ==
        "BACKPLANE_FALLBACK='host' is not a fallback policy: use cpu (run ops a backend lacks on "
        "the CPU) or off; using off");
}

TEST_CASE("BACKPLANE_VALIDATE takes 1, compare or 0, and BACKPLANE_VALIDATE_FATAL 1 or 0") {
  using bp::detail::parse_validate;
  using bp::detail::parse_validate_fatal;
  using bp::detail::ValidationMode;
  CHECK(parse_validate("1").mode == ValidationMode::Check);
  CHECK(parse_validate(" 1 ").mode == ValidationMode::Check);
  CHECK(parse_validate("compare").mode == ValidationMode::Compare);
  CHECK(parse_validate(" Compare ").mode == ValidationMode::Compare);
  CHECK(parse_validate("0").mode == ValidationMode::Off);
  CHECK_FALSE(parse_validate("1").warning);
  CHECK_FALSE(parse_validate("compare").warning);
  CHECK_FALSE(parse_validate("0").warning);
  CHECK(parse_validate_fatal("1").on);
  CHECK_FALSE(parse_validate_fatal("0").on);
  CHECK_FALSE(parse_validate_fatal("0").warning);
}

TEST_CASE("a bad BACKPLANE_VALIDATE or BACKPLANE_VALIDATE_FATAL warns with the values and is off") {
  const auto validate = bp::detail::parse_validate("on");
  CHECK(validate.mode == bp::detail::ValidationMode::Off);
  REQUIRE(validate.warning);
  CHECK(*validate.warning ==
        "BACKPLANE_VALIDATE='on' is not a validation setting: use 1 (check that every kernel "
        "writes all of its outputs, none of its inputs and nothing past their end), compare "
        "(those checks, and every kernel's results against the host's) or 0; validation stays "
        "off");
  const auto fatal = bp::detail::parse_validate_fatal("yes");
  CHECK_FALSE(fatal.on);
  REQUIRE(fatal.warning);
  CHECK(*fatal.warning ==
        "BACKPLANE_VALIDATE_FATAL='yes' is not a setting: use 1 (a finding of BACKPLANE_VALIDATE "
        "throws a bp::Error) or 0 (it is logged); using 0");
}
