// What init() reads from the environment: BACKPLANE_DISTRIBUTED_TIMEOUT and
// BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES, and the refusal of values it cannot use.
#include <backplane/distributed.h>

#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace bp::distributed {
namespace {

// Sets an environment variable for its lifetime, and puts back what was there.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedVariable() {
    if (previous_) {
      ::setenv(name_, previous_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> previous_;
};

TEST_CASE("BACKPLANE_DISTRIBUTED_TIMEOUT is seconds, fractions too") {
  {
    const ScopedVariable timeout("BACKPLANE_DISTRIBUTED_TIMEOUT", "0.25");
    CHECK(options_from_environment().timeout == std::chrono::milliseconds(250));
  }
  {
    const ScopedVariable timeout("BACKPLANE_DISTRIBUTED_TIMEOUT", "60");
    CHECK(options_from_environment().timeout == std::chrono::seconds(60));
  }
  ::unsetenv("BACKPLANE_DISTRIBUTED_TIMEOUT");
  CHECK(options_from_environment().timeout == std::chrono::seconds(300));
}

TEST_CASE("a BACKPLANE_DISTRIBUTED_TIMEOUT that is not a time is refused, saying what to write") {
  for (const char* value : {"", "soon", "-1", "0", "1e9", "30s"}) {
    CAPTURE(value);
    const ScopedVariable timeout("BACKPLANE_DISTRIBUTED_TIMEOUT", value);
    CHECK_THROWS_WITH_AS(options_from_environment(),
                         doctest::Contains("is not a number of seconds greater than 0 and at most "
                                           "86400 (a day); write, say, 60 or 0.5"),
                         Error);
  }
}

TEST_CASE("BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES is 0 or 1, and nothing else") {
  {
    const ScopedVariable variable("BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES", "0");
    CHECK_FALSE(options_from_environment().device_collectives);
  }
  {
    const ScopedVariable variable("BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES", "yes");
    CHECK_THROWS_WITH_AS(options_from_environment(),
                         doctest::Contains("BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES='yes' is "
                                           "neither 0 nor 1"),
                         Error);
  }
}

}  // namespace
}  // namespace bp::distributed
