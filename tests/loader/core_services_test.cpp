// What plugins report through the core (ABI 1.3): named after the plugin, warnings kept in
// bp::runtime_info().warnings, from any thread; and plugins built before 1.3 load without it.
// What the core tells a kernel about its inputs' storage (ABI 1.5): which storage, and how often
// written.
#include "fixtures.h"
#include "runtime/core_services.h"
#include "runtime/warning_list.h"

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using bp::detail::PluginCoreServices;
using bp::detail::WarningList;
using loader_test::contains;
using loader_test::fixture_path;
using loader_test::load_once;

namespace {

bool any_warning_contains(std::string_view part) {
  const std::vector<std::string> warnings = bp::runtime_info().warnings;
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](const std::string& warning) { return contains(warning, part); });
}

void log_through(const PluginCoreServices& core, int32_t level, const char* message) {
  core.services()->log(core.services()->context, level, message);
}

}  // namespace

TEST_CASE("a plugin's warnings are runtime warnings named after it, also from its own threads") {
  load_once(fixture_path("fixture_warns"));
  const std::vector<std::string> warnings = bp::runtime_info().warnings;
  CHECK(std::ranges::count(warnings,
                           "fixture_warns: FIXTURE_QUEUES='many' is not a number of "
                           "queues; using the default, 4") == 1);
  CHECK(std::ranges::count(warnings, "fixture_warns: the fixture device's fan is slow") == 1);
  // Logged at info level, which is not a warning.
  CHECK_FALSE(any_warning_contains("found 1 fixture device"));
}

TEST_CASE("a plugin built against ABI 1.2 loads and is not handed the core's services") {
  const bp::PluginInfo info = load_once(fixture_path("fixture_abi_1_2"));
  CHECK(info.abi_minor == 2);
  CHECK(info.devices.size() == 1);
  // Its attach_core lies past struct_size: absent, so it is not called (it would warn).
  CHECK_FALSE(any_warning_contains("attach_core lies past struct_size"));
}

TEST_CASE("the core keeps a plugin's warnings and errors, named after it, but not its info") {
  WarningList warnings;
  const PluginCoreServices core("acme", warnings);
  CHECK(core.services()->struct_size == sizeof(bp_core_services));
  log_through(core, BP_LOG_WARN, "ACME_QUEUES='x' is not a number");
  log_through(core, BP_LOG_ERROR, "the fan stopped");
  log_through(core, BP_LOG_INFO, "queue 0 opened");
  log_through(core, BP_LOG_DEBUG, "queue 0 idle");
  log_through(core, 42, "a level no ABI version has");
  log_through(core, BP_LOG_WARN, nullptr);
  CHECK(warnings.all() ==
        std::vector<std::string>{"acme: ACME_QUEUES='x' is not a number", "acme: the fan stopped",
                                 "acme: a level no ABI version has", "acme: (no message)"});
}

TEST_CASE("a plugin that warns without end has its first warnings kept, and a note") {
  WarningList warnings;
  const PluginCoreServices core("acme", warnings);
  for (size_t i = 0; i < PluginCoreServices::kMaxKeptWarnings + 50; ++i) {
    log_through(core, BP_LOG_WARN, "the queue is full");
  }
  const std::vector<std::string> kept = warnings.all();
  REQUIRE(kept.size() == PluginCoreServices::kMaxKeptWarnings + 1);
  CHECK(kept[PluginCoreServices::kMaxKeptWarnings - 1] == "acme: the queue is full");
  CHECK(kept.back() ==
        "acme: more warnings than the 100 kept here; BACKPLANE_LOG_LEVEL=warn shows them all on "
        "stderr");
}

namespace {

struct StorageVersion {
  int32_t known;
  uint64_t storage = 0;
  uint64_t version = 0;
};

// What a kernel given `tensor` as an input learns from bp_core_services::storage_version.
StorageVersion storage_version_of(const PluginCoreServices& core, const bp::Tensor& tensor) {
  StorageVersion result{};
  result.known = core.services()->storage_version(
      core.services()->context, &tensor.impl()->dlpack_view(), &result.storage, &result.version);
  return result;
}

}  // namespace

TEST_CASE("a kernel's input names its storage, and the version grows with every write into it") {
  WarningList warnings;
  const PluginCoreServices core("acme", warnings);
  bp::Tensor weights = bp::randn({4, 6});
  const bp::Tensor rows = weights.slice(0, 1, 3);
  const StorageVersion before = storage_version_of(core, weights);
  REQUIRE(before.known == 1);
  // Another view of the storage names the same storage; another storage, another.
  const StorageVersion of_view = storage_version_of(core, rows);
  CHECK(of_view.known == 1);
  CHECK(of_view.storage == before.storage);
  CHECK(of_view.version == before.version);
  CHECK(storage_version_of(core, bp::randn({4, 6})).storage != before.storage);

  // In place, through out=, through copy_, through another view: each write is seen.
  uint64_t last = before.version;
  const auto version_grew = [&] {
    const StorageVersion now = storage_version_of(core, weights);
    CHECK(now.storage == before.storage);
    const bool grew = now.version > last;
    last = now.version;
    return grew;
  };
  weights.mul_(2.0);
  CHECK(version_grew());
  bp::mul_out(weights, bp::ones({4, 6}), bp::ones({4, 6}));
  CHECK(version_grew());
  weights.copy_(bp::zeros({4, 6}));
  CHECK(version_grew());
  weights.slice(0, 0, 1).fill_(3.0);
  CHECK(version_grew());
  CHECK(storage_version_of(core, rows).version == last);
  // Reading changes nothing.
  (void)weights.const_data_ptr();
  (void)bp::add(weights, 1.0);
  CHECK_FALSE(version_grew());
}

TEST_CASE("storage whose contents may change behind Backplane's back has no version") {
  WarningList warnings;
  const PluginCoreServices core("acme", warnings);
  bp::Tensor handed_out = bp::randn({3});
  CHECK(storage_version_of(core, handed_out).known == 1);
  (void)handed_out.data_ptr();
  CHECK(storage_version_of(core, handed_out).known == 0);
  CHECK(storage_version_of(core, handed_out.slice(0, 1, 2)).known == 0);

  float values[3] = {1, 2, 3};
  CHECK(storage_version_of(core, bp::from_blob(values, {3}, bp::kFloat32)).known == 0);
  CHECK(storage_version_of(core, bp::from_blob(values, {3}, bp::kFloat32).clone()).known == 1);

  const bp::Tensor exported = bp::randn({3});
  DLManagedTensor* managed = bp::to_dlpack(exported);
  CHECK(storage_version_of(core, exported).known == 0);
  managed->deleter(managed);
}
