// BACKPLANE_DISTRIBUTED_TIMEOUT's parsing.
#include <backplane/distributed.h>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace bp::distributed {

namespace {

// BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES: 0 or 1.
bool device_collectives_from(const char* value) {
  if (value == nullptr) return true;
  const std::string_view text(value);
  if (text == "0" || text == "1") return text == "1";
  throw Error(
      fmt::format("BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES='{}' is neither 0 nor 1: "
                  "write 1 (the default) to run device tensors through their backend's "
                  "collectives, or 0 to copy them through host memory",
                  value));
}

}  // namespace

Options options_from_environment() {
  Options options;
  options.device_collectives =
      device_collectives_from(secure_getenv("BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES"));
  const char* value = secure_getenv("BACKPLANE_DISTRIBUTED_TIMEOUT");
  if (value == nullptr) return options;
  const char* const end = value + std::strlen(value);
  double seconds = 0;
  const auto [stop, error] = std::from_chars(value, end, seconds);
  // A day is far beyond any collective; more is surely a typo.
  constexpr double kLongest = 24 * 3600;
  if (error != std::errc() || stop != end || !(seconds > 0) || seconds > kLongest) {
    throw Error(
        fmt::format("BACKPLANE_DISTRIBUTED_TIMEOUT='{}' is not a number of seconds "
                    "greater than 0 and at most {} (a day); write, say, 60 or 0.5",
                    value, kLongest));
  }
  options.timeout = std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1000)));
  return options;
}

}  // namespace bp::distributed
