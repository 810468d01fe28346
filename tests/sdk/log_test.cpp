// plugin::warn and plugin::log_message: through the core's log function once a core attached
// itself to the descriptor (ABI 1.3), and straight to stderr under a core that did not.
#include <backplane/sdk/log.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

// What the fake core was told: the context it got back, and each level and message.
struct CoreLog {
  std::vector<std::pair<int32_t, std::string>> messages;
  void* context_seen = nullptr;
};

CoreLog core_log;

void record(void* context, int32_t level, const char* message) {
  core_log.context_seen = context;
  core_log.messages.emplace_back(level, message);
}

// A descriptor as the generated entry point leaves it, attached to `services` as the core
// attaches itself, or to no core at all (NULL). Each test starts from its own.
bp_plugin plugin_attached_to(const bp_core_services* services) {
  bp_plugin plugin{};
  plugin.struct_size = sizeof(bp_plugin);
  plugin.name = "acme";
  bp::plugin::connect_to_core(plugin);
  plugin.attach_core(services);
  core_log = CoreLog{};
  return plugin;
}

// Everything written to stderr while `body` runs.
template <typename Body>
std::string stderr_of(Body&& body) {
  std::fflush(stderr);
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  const int saved = dup(STDERR_FILENO);
  dup2(fileno(capture), STDERR_FILENO);
  body();
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::string text;
  std::rewind(capture);
  for (int c = std::fgetc(capture); c != EOF; c = std::fgetc(capture)) text += static_cast<char>(c);
  std::fclose(capture);
  return text;
}

}  // namespace

TEST_CASE("connect_to_core sets the descriptor's attach_core") {
  bp_plugin plugin{};
  plugin.name = "acme";
  bp::plugin::connect_to_core(plugin);
  CHECK((plugin.attach_core != nullptr));
}

TEST_CASE("once a core attached itself, warnings and log messages go to its log function") {
  int core_handle = 0;
  const bp_core_services services{sizeof(bp_core_services), &core_handle, &record};
  plugin_attached_to(&services);
  const std::string written = stderr_of([] {
    bp::plugin::warn("ACME_QUEUES='x' is not a number");
    bp::plugin::log_message(BP_LOG_DEBUG, "queue 0 opened");
  });
  CHECK(written.empty());
  REQUIRE(core_log.messages.size() == 2);
  CHECK(core_log.messages[0] ==
        std::pair<int32_t, std::string>{BP_LOG_WARN, "ACME_QUEUES='x' is not a number"});
  CHECK(core_log.messages[1] == std::pair<int32_t, std::string>{BP_LOG_DEBUG, "queue 0 opened"});
  CHECK(core_log.context_seen == &core_handle);
  plugin_attached_to(nullptr);
}

TEST_CASE("without a core, warnings and errors go to stderr in the core's format, others nowhere") {
  plugin_attached_to(nullptr);
  const std::string written = stderr_of([] {
    bp::plugin::warn("ACME_QUEUES='x' is not a number");
    bp::plugin::log_message(BP_LOG_ERROR, "the fan stopped");
    bp::plugin::log_message(BP_LOG_INFO, "queue 0 opened");
  });
  CHECK(written ==
        "[backplane] warn: acme: ACME_QUEUES='x' is not a number\n"
        "[backplane] error: acme: the fan stopped\n");
}

TEST_CASE("services too short to hold a log function count as no core") {
  const bp_core_services services{offsetof(bp_core_services, log), nullptr, &record};
  plugin_attached_to(&services);
  const std::string written =
      stderr_of([] { bp::plugin::warn("ACME_QUEUES='x' is not a number"); });
  CHECK(core_log.messages.empty());
  CHECK(written == "[backplane] warn: acme: ACME_QUEUES='x' is not a number\n");
  plugin_attached_to(nullptr);
}
