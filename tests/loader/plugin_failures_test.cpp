// Every way a plugin can be broken gets its own message naming the file and what to do, is kept
// in runtime_info().failures, and leaves the process and the cpu backend working.
#include "fixtures.h"
#include "runtime/registry.h"

#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>

using loader_test::check_cpu_backend_works;
using loader_test::contains;
using loader_test::fixture_dir;
using loader_test::fixture_path;
using loader_test::load_failure;
using loader_test::load_once;

namespace {

// The reason runtime_info() keeps for `path`.
std::string kept_reason(const std::string& path) {
  const bp::RuntimeInfo info = bp::runtime_info();
  const auto it = std::find_if(info.failures.begin(), info.failures.end(),
                               [&](const bp::PluginFailure& f) { return f.path == path; });
  REQUIRE_MESSAGE(it != info.failures.end(), "no failure kept for ", path);
  return it->reason;
}

// Loading the fixture fails with "could not load plugin <path>: <reason>", the same reason is
// kept, and the cpu backend still works. Returns the reason.
std::string check_refused(const std::string& path) {
  const std::string message = load_failure(path);
  const std::string prefix = fmt::format("could not load plugin {}: ", path);
  CHECK(message.starts_with(prefix));
  const std::string reason = message.substr(std::min(prefix.size(), message.size()));
  CHECK(kept_reason(path) == reason);
  check_cpu_backend_works();
  return reason;
}

}  // namespace

TEST_CASE("a file that is not a shared library is refused with dlopen's reason") {
  const std::string path = fixture_path("garbage");
  const std::string reason = check_refused(path);
  CHECK(reason.starts_with("it is not a shared library this process can load: " + path + ":"));
  CHECK(contains(reason, "built with backplane_add_plugin"));
}

TEST_CASE("a plugin whose dependency is missing names the missing library") {
  const std::string reason = check_refused(fixture_path("fixture_missing_dependency"));
  CHECK(
      reason.starts_with("a library it depends on is missing: libfixture_unshipped.so: cannot "
                         "open shared object file"));
  CHECK(contains(reason, "Install that library, or add its folder to LD_LIBRARY_PATH"));
}

TEST_CASE("a library without the entry symbol is asked whether it is a plugin") {
  CHECK(check_refused(fixture_path("fixture_no_entry")) ==
        "it does not export backplane_plugin_entry: is it a Backplane plugin? Build it with "
        "backplane_add_plugin");
}

TEST_CASE("an entry point that returns NULL is reported as refusing the core") {
  CHECK(check_refused(fixture_path("fixture_null_entry"))
            .starts_with("its backplane_plugin_entry returned no descriptor (NULL)"));
}

TEST_CASE("a descriptor smaller than ABI 1 allows is refused") {
  const std::string reason = check_refused(fixture_path("fixture_tiny_descriptor"));
  CHECK(reason.starts_with(fmt::format("its descriptor is {} bytes", offsetof(bp_plugin, name))));
  CHECK(contains(reason, "rebuild the plugin against this SDK"));
}

TEST_CASE("a plugin built for another ABI major version is told to rebuild") {
  CHECK(check_refused(fixture_path("fixture_abi_major")) ==
        fmt::format("it was built for ABI {}.x, this core speaks {}.x: rebuild the plugin against "
                    "this SDK",
                    BP_ABI_MAJOR + 1, BP_ABI_MAJOR));
}

TEST_CASE("a plugin whose init fails is refused with the plugin's own message") {
  CHECK(check_refused(fixture_path("fixture_init_fails")) ==
        "its init failed (device error): fixture_init_fails: the driver says \"version "
        "1.0\";\n\tversion 2.0 is needed");
  CHECK_FALSE(bp::detail::Registry::get().device_type_of("fixture_init_fails"));
}

TEST_CASE("a second plugin for a backend already loaded names the first one's file") {
  const std::string first = fixture_dir() + "/twin_a/libbackplane_fixture_twin.so";
  load_once(first);
  CHECK(check_refused(fixture_dir() + "/twin_b/libbackplane_fixture_twin.so") ==
        fmt::format("backend 'fixture_twin' is already provided by {}: remove one of the two "
                    "plugins, or select one with BACKPLANE_BACKENDS or BACKPLANE_PLUGIN_PATH",
                    first));
}

TEST_CASE("a descriptor shorter than the ABI version it claims is refused") {
  const std::string reason = check_refused(fixture_path("fixture_short_descriptor"));
  CHECK(reason == fmt::format("its descriptor is {} bytes, but it claims ABI {}.{}, whose "
                              "descriptor is {} bytes (a multiple of {}): it is corrupt or was "
                              "not made by backplane_add_plugin; rebuild the plugin against this "
                              "SDK",
                              offsetof(bp_plugin, kernel_count) + sizeof(int64_t), BP_ABI_MAJOR,
                              BP_ABI_MINOR, sizeof(bp_plugin), alignof(bp_plugin)));
}

TEST_CASE("an entry point that throws is refused with the exception's message") {
  CHECK(check_refused(fixture_path("fixture_entry_throws")) ==
        "its backplane_plugin_entry let a C++ exception escape (fixture_entry_throws: no license "
        "for this machine): plugin functions must return a bp_status instead "
        "(bp::plugin::guard turns exceptions into one)");
}

TEST_CASE("a path that does not exist is refused") {
  CHECK(check_refused(fixture_dir() + "/libbackplane_nothing_here.so") ==
        "the file does not exist");
}

TEST_CASE("a folder given to load_plugin is refused with what to do instead") {
  CHECK(check_refused(fixture_dir()).starts_with("it is a folder, not a plugin file"));
}
