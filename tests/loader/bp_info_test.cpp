// bp-info, run as a user runs it, in a fresh process per environment: what it prints, and what
// the BACKPLANE_* variables make the loader do.
#include "child_process.h"
#include "fixtures.h"
#include "json_reader.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using loader_test::contains;
using loader_test::fixture_dir;
using loader_test::fixture_path;
using loader_test::JsonValue;
using loader_test::parse_json;
using test_support::ChildResult;
using test_support::EnvironmentVariables;

namespace {

// bp-info with `arguments`, in a child process with this environment.
ChildResult run_bp_info(const std::vector<std::string>& arguments,
                        const EnvironmentVariables& environment) {
  std::vector<std::string> argv{BP_INFO_EXECUTABLE};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return test_support::run_child(argv, environment);
}

// bp-info --json in the given environment, which must succeed and print valid JSON.
JsonValue bp_info_json(const EnvironmentVariables& environment) {
  const ChildResult result = run_bp_info({"--json"}, environment);
  INFO("stderr: ", result.err);
  REQUIRE(result.exit_code == 0);
  return parse_json(result.out);
}

std::vector<std::string> plugin_names(const JsonValue& info) {
  std::vector<std::string> names;
  for (const JsonValue& plugin : info["plugins"].array()) names.push_back(plugin["name"].string());
  return names;
}

const JsonValue& plugin_named(const JsonValue& info, const std::string& name) {
  for (const JsonValue& plugin : info["plugins"].array()) {
    if (plugin["name"].string() == name) return plugin;
  }
  throw std::runtime_error("bp-info lists no plugin named " + name);
}

// The failure kept for the plugin file `path`.
std::string failure_reason(const JsonValue& info, const std::string& path) {
  for (const JsonValue& failure : info["failures"].array()) {
    if (failure["path"].string() == path) return failure["reason"].string();
  }
  throw std::runtime_error("bp-info lists no failure for " + path);
}

std::vector<std::string> strings(const JsonValue& array) {
  std::vector<std::string> values;
  for (const JsonValue& value : array.array()) values.push_back(value.string());
  return values;
}

// Bad values for variables that the bundled plugins read themselves.
const EnvironmentVariables kBadPluginVariables{{"BACKPLANE_NUM_THREADS", "junk"},
                                               {"BACKPLANE_CPU_PRIMITIVE_CACHE", "junk"},
                                               {"BACKPLANE_OPENCL_KERNEL_SHAPE", "junk"}};

// The starts of the warnings kBadPluginVariables gives with the plugins bp-info lists in `info`.
std::vector<std::string> bad_plugin_variable_warnings(const JsonValue& info) {
  std::vector<std::string> warnings{
      "cpu: BACKPLANE_NUM_THREADS='junk' is not a thread count from 1 to 1024; using the default, ",
      "cpu: BACKPLANE_CPU_PRIMITIVE_CACHE='junk' is not a number of cached primitives from 0 (no "
      "caching) to 1048576; using the default, 1024"};
  if (std::ranges::count(plugin_names(info), "opencl") == 1) {
    warnings.push_back(
        "opencl: BACKPLANE_OPENCL_KERNEL_SHAPE='junk' is neither 'gpu' nor 'cpu'; ignoring it, so "
        "each device runs the kernels shaped for its type");
  }
  return warnings;
}

bool starts_one_of(const std::vector<std::string>& warnings, const std::string& start) {
  return std::ranges::any_of(
      warnings, [&](const std::string& warning) { return warning.starts_with(start); });
}

}  // namespace

TEST_CASE("bp-info --json describes every plugin and every failure with the documented keys") {
  const JsonValue info = bp_info_json({{"BACKPLANE_PLUGIN_PATH", fixture_dir()}});
  REQUIRE(info.is_object());
  REQUIRE(info["plugins"].is_array());
  REQUIRE(info["failures"].is_array());
  for (const JsonValue& plugin : info["plugins"].array()) {
    for (const char* key : {"name", "path", "version", "abi"}) {
      CAPTURE(key);
      CHECK(plugin[key].is_string());
    }
    CHECK(plugin["devices"].is_array());
    CHECK(plugin["ops"].is_array());
    CHECK(plugin["abi"].string().starts_with(std::to_string(BP_ABI_MAJOR) + "."));
  }
  for (const JsonValue& failure : info["failures"].array()) {
    CHECK(failure["path"].is_string());
    CHECK(failure["reason"].is_string());
  }

  const JsonValue& fixture = plugin_named(info, "fixture");
  CHECK(fixture["path"].string() == fixture_path("fixture"));
  CHECK(fixture["version"].string() == "0.0.1");
  CHECK(strings(fixture["ops"]) == std::vector<std::string>{"add.out"});
  REQUIRE(fixture["devices"].array().size() == 1);
  const JsonValue& device = fixture["devices"].array()[0];
  CHECK(device["device"].string() == "fixture:0");
  CHECK(device["name"].string() == "fixture device");
  CHECK(device["total_memory"].number() == 1 << 20);
  CHECK_FALSE(fixture["events"].boolean());
  CHECK(plugin_named(info, "fixture_device_memory")["events"].boolean());

  CHECK(plugin_named(info, "fixture_no_devices")["device_note"].string() ==
        "fixture_no_devices: no driver is installed on this machine");
  const JsonValue& refused = plugin_named(info, "fixture_schema_mismatch")["refused_kernels"];
  REQUIRE(refused.array().size() == 2);
  CHECK(refused.array()[0]["op"].string() == "mul.out");
}

TEST_CASE("bp-info --json keeps each broken fixture's own reason and escapes it") {
  const JsonValue info =
      bp_info_json({{"BACKPLANE_PLUGIN_PATH", fixture_dir() + ":" + fixture_dir() +
                                                  "/twin_a:" + fixture_dir() + "/twin_b"}});
  CHECK(contains(failure_reason(info, fixture_path("garbage")), "is not a shared library"));
  CHECK(contains(failure_reason(info, fixture_path("fixture_missing_dependency")),
                 "a library it depends on is missing: libfixture_unshipped.so"));
  CHECK(contains(failure_reason(info, fixture_path("fixture_no_entry")),
                 "does not export backplane_plugin_entry"));
  CHECK(contains(failure_reason(info, fixture_path("fixture_null_entry")),
                 "returned no descriptor (NULL)"));
  CHECK(
      contains(failure_reason(info, fixture_path("fixture_tiny_descriptor")), "its descriptor is"));
  CHECK(contains(failure_reason(info, fixture_path("fixture_abi_major")),
                 "this core speaks " + std::to_string(BP_ABI_MAJOR) + ".x"));
  CHECK(failure_reason(info, fixture_path("fixture_init_fails")) ==
        "its init failed (device error): fixture_init_fails: the driver says \"version "
        "1.0\";\n\tversion 2.0 is needed");
  CHECK(contains(failure_reason(info, fixture_path("fixture_short_descriptor")),
                 "but it claims ABI " + std::to_string(BP_ABI_MAJOR) + "." +
                     std::to_string(BP_ABI_MINOR)));
  CHECK(contains(failure_reason(info, fixture_path("fixture_entry_throws")),
                 "its backplane_plugin_entry let a C++ exception escape (fixture_entry_throws: no "
                 "license for this machine)"));
  CHECK(contains(failure_reason(info, fixture_path("fixture_misnamed")),
                 "its file name says backend 'fixture_misnamed', but it provides "
                 "'fixture_renamed'"));
  CHECK(failure_reason(info, fixture_dir() + "/twin_b/libbackplane_fixture_twin.so") ==
        "backend 'fixture_twin' is already provided by " + fixture_dir() +
            "/twin_a/libbackplane_fixture_twin.so: remove one of the two plugins, or select one "
            "with BACKPLANE_BACKENDS or BACKPLANE_PLUGIN_PATH");
  CHECK(info["failures"].array().size() == 11);
  // The plugins found after the broken ones still loaded.
  CHECK(plugin_named(info, "fixture_twin")["path"].string() ==
        fixture_dir() + "/twin_a/libbackplane_fixture_twin.so");
}

TEST_CASE("plugin failures are warnings on stderr and bp-info still exits 0") {
  const ChildResult result = run_bp_info({}, {{"BACKPLANE_PLUGIN_PATH", fixture_dir()}});
  CHECK(result.exit_code == 0);
  CHECK(contains(result.err, "[backplane] warn: could not load plugin " +
                                 fixture_path("fixture_no_entry") + ": it does not export"));
  CHECK(contains(result.out, "Plugins that failed to load:"));
  CHECK(contains(result.out, fixture_path("garbage")));
}

TEST_CASE("a plugin whose shutdown throws is logged at exit, and the process exits as usual") {
  const std::string plugin =
      fixture_dir() + "/shutdown_throws/libbackplane_fixture_shutdown_throws.so";
  const ChildResult result = run_bp_info({}, {{"BACKPLANE_PLUGIN_PATH", plugin}});
  CHECK(result.exit_code == 0);
  CHECK(contains(result.out, "fixture_shutdown_throws 0.0.1"));
  CHECK(contains(result.err,
                 "[backplane] warn: backend 'fixture_shutdown_throws' did not shut down cleanly: "
                 "its shutdown let a C++ exception escape (fixture_shutdown_throws: the device "
                 "hung up)"));
}

TEST_CASE("bp-info shows devices, events and op coverage with the ops a plugin lacks") {
  const ChildResult result = run_bp_info({}, {{"BACKPLANE_PLUGIN_PATH", fixture_dir()}});
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.out, "fixture 0.0.1 (ABI " + std::to_string(BP_ABI_MAJOR) + "."));
  CHECK(contains(result.out, "fixture:0: fixture device, 1.0 MiB (initialized 1 time(s))"));
  CHECK(contains(result.out, "missing: sub.out, mul.out"));
  CHECK(contains(result.out, "devices: none: fixture_no_devices: no driver is installed"));
  CHECK(contains(result.out, "refused kernel mul.out: its schema hash"));
  CHECK(contains(result.out, "  events: none (bp::Event waits for the device)\n"));
  CHECK(contains(result.out, "  events: yes\n"));  // fixture_device_memory
}

TEST_CASE("BACKPLANE_BACKENDS=cpu makes bp-info list only cpu and opens no other plugin") {
  const EnvironmentVariables environment{{"BACKPLANE_BACKENDS", "cpu"},
                                         {"BACKPLANE_PLUGIN_PATH", fixture_dir()}};
  const JsonValue info = bp_info_json(environment);
  CHECK(plugin_names(info) == std::vector<std::string>{"cpu"});
  // Broken fixtures are left out by their file names, so none of them was opened.
  CHECK(info["failures"].array().empty());

  const ChildResult human = run_bp_info({}, environment);
  CHECK(contains(human.out, "cpu "));
  CHECK_FALSE(contains(human.out, "fixture"));
}

TEST_CASE("BACKPLANE_BACKENDS of '*' and '!cpu' loads every backend but cpu") {
  const JsonValue info = bp_info_json(
      {{"BACKPLANE_BACKENDS", "*,!cpu"}, {"BACKPLANE_PLUGIN_PATH", fixture_path("fixture")}});
  // Other in-tree backends (opencl, where it is built) load too; cpu must not.
  const std::vector<std::string> names = plugin_names(info);
  CHECK(std::find(names.begin(), names.end(), "fixture") != names.end());
  CHECK(std::find(names.begin(), names.end(), "cpu") == names.end());
}

TEST_CASE("a backend left out by BACKPLANE_BACKENDS is shown at info level") {
  const ChildResult result = run_bp_info({}, {{"BACKPLANE_BACKENDS", "cpu"},
                                              {"BACKPLANE_PLUGIN_PATH", fixture_path("fixture")},
                                              {"BACKPLANE_LOG_LEVEL", "info"}});
  CHECK(
      contains(result.err, "[backplane] info: skipping " + fixture_path("fixture") +
                               ": backend 'fixture' is not selected by BACKPLANE_BACKENDS='cpu'"));
}

TEST_CASE("an unknown name in BACKPLANE_BACKENDS warns and lists the backends found") {
  const ChildResult result =
      run_bp_info({"--json"}, {{"BACKPLANE_BACKENDS", "cdua"},
                               {"BACKPLANE_PLUGIN_PATH", fixture_path("fixture")}});
  REQUIRE(result.exit_code == 0);
  const JsonValue info = parse_json(result.out);
  CHECK(info["plugins"].array().empty());
  const std::vector<std::string> warnings = strings(info["warnings"]);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].starts_with(
      "BACKPLANE_BACKENDS names 'cdua', which no plugin provides; the plugins found "
      "provide: "));
  CHECK(contains(warnings[0], "fixture"));
  CHECK(contains(result.err, "[backplane] warn: " + warnings[0]));
}

TEST_CASE("a long unknown name in BACKPLANE_BACKENDS is quoted once in the warning, cut short") {
  const std::string name(5000, 'x');
  const JsonValue info = bp_info_json(
      {{"BACKPLANE_BACKENDS", name}, {"BACKPLANE_PLUGIN_PATH", fixture_path("fixture")}});
  const std::vector<std::string> warnings = strings(info["warnings"]);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].starts_with("BACKPLANE_BACKENDS names '" + std::string(48, 'x') +
                                "...' (5000 bytes), which no plugin provides; "));
  CHECK(warnings[0].size() < 200);
}

TEST_CASE("a malformed BACKPLANE_BACKENDS warns with the syntax and loads every backend") {
  const JsonValue info = bp_info_json(
      {{"BACKPLANE_BACKENDS", "cpu;fixture"}, {"BACKPLANE_PLUGIN_PATH", fixture_path("fixture")}});
  CHECK(std::ranges::count(plugin_names(info), "fixture") == 1);
  const std::vector<std::string> warnings = strings(info["warnings"]);
  REQUIRE(warnings.size() == 1);
  CHECK(contains(warnings[0], "'cpu,cuda' or '*,!opencl'"));
}

TEST_CASE("BACKPLANE_PLUGIN_PATH entries all load and a missing one is only a warning") {
  const std::string missing = fixture_dir() + "/no_such_folder";
  const ChildResult result = run_bp_info(
      {"--json"}, {{"BACKPLANE_PLUGIN_PATH", fixture_path("fixture") + ":" + missing + ":" +
                                                 fixture_path("fixture_thrower")}});
  REQUIRE(result.exit_code == 0);
  const JsonValue info = parse_json(result.out);
  const std::vector<std::string> names = plugin_names(info);
  CHECK(std::ranges::count(names, "fixture") == 1);
  CHECK(std::ranges::count(names, "fixture_thrower") == 1);
  CHECK(info["failures"].array().empty());
  const std::string warning =
      "BACKPLANE_PLUGIN_PATH entry '" + missing + "' does not exist; it is skipped";
  CHECK(strings(info["warnings"]) == std::vector<std::string>{warning});
  CHECK(contains(result.err, "[backplane] warn: " + warning));
}

TEST_CASE("BACKPLANE_DEFAULT_DEVICE names the default device, which bp-info shows") {
  const std::string path = fixture_path("fixture");
  CHECK(bp_info_json({{"BACKPLANE_PLUGIN_PATH", path}})["default_device"].string() == "cpu");
  for (const char* spec : {"fixture", "fixture:0", " fixture:0 "}) {
    INFO(spec);
    const JsonValue info =
        bp_info_json({{"BACKPLANE_PLUGIN_PATH", path}, {"BACKPLANE_DEFAULT_DEVICE", spec}});
    CHECK(info["default_device"].string() == "fixture:0");
    CHECK(info["warnings"].array().empty());
  }
  const ChildResult human =
      run_bp_info({}, {{"BACKPLANE_PLUGIN_PATH", path}, {"BACKPLANE_DEFAULT_DEVICE", "fixture"}});
  CHECK(human.out.starts_with("Default device: fixture:0\n"));
}

TEST_CASE("a BACKPLANE_DEFAULT_DEVICE that names no loaded device warns why and keeps cpu") {
  const std::string path = fixture_path("fixture");
  const struct {
    EnvironmentVariables environment;
    const char* reason;
  } cases[] = {
      {{{"BACKPLANE_PLUGIN_PATH", path}, {"BACKPLANE_DEFAULT_DEVICE", "fixture:1"}},
       "device index 1 is out of range in 'fixture:1': fixture has 1 device(s)"},
      {{{"BACKPLANE_PLUGIN_PATH", path}, {"BACKPLANE_DEFAULT_DEVICE", "fixtur"}},
       "unknown device type 'fixtur' in 'fixtur': the loaded backends are"},
      {{{"BACKPLANE_PLUGIN_PATH", path}, {"BACKPLANE_DEFAULT_DEVICE", "fixture:x"}},
       "invalid device string 'fixture:x'"},
      {{{"BACKPLANE_PLUGIN_PATH", path},
        {"BACKPLANE_BACKENDS", "cpu"},
        {"BACKPLANE_DEFAULT_DEVICE", "fixture"}},
       "A backend that failed to load or that BACKPLANE_BACKENDS excludes is not available"},
  };
  for (const auto& [environment, reason] : cases) {
    INFO(reason);
    const ChildResult result = run_bp_info({"--json"}, environment);
    REQUIRE(result.exit_code == 0);
    const JsonValue info = parse_json(result.out);
    CHECK(info["default_device"].string() == "cpu");
    const std::vector<std::string> warnings = strings(info["warnings"]);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].starts_with("BACKPLANE_DEFAULT_DEVICE='"));
    CHECK(contains(warnings[0], "names no loaded device, so cpu is the default"));
    CHECK(contains(warnings[0], reason));
    CHECK(contains(result.err, "[backplane] warn: " + warnings[0]));
  }
}

TEST_CASE("BACKPLANE_LOG_LEVEL=error keeps warnings off stderr but in the runtime info") {
  const ChildResult result = run_bp_info(
      {"--json"}, {{"BACKPLANE_PLUGIN_PATH", "/nonexistent"}, {"BACKPLANE_LOG_LEVEL", "error"}});
  REQUIRE(result.exit_code == 0);
  CHECK_FALSE(contains(result.err, "[backplane]"));
  CHECK(parse_json(result.out)["warnings"].array().size() == 1);
}

TEST_CASE("bad values of the plugins' own variables are warnings in bp-info --json and stderr") {
  const ChildResult result = run_bp_info({"--json"}, kBadPluginVariables);
  REQUIRE(result.exit_code == 0);
  const JsonValue info = parse_json(result.out);
  REQUIRE(std::ranges::count(plugin_names(info), "cpu") == 1);
  const std::vector<std::string> warnings = strings(info["warnings"]);
  for (const std::string& expected : bad_plugin_variable_warnings(info)) {
    CAPTURE(expected);
    CHECK(starts_one_of(warnings, expected));
    CHECK(contains(result.err, "[backplane] warn: " + expected));
  }
}

TEST_CASE("BACKPLANE_LOG_LEVEL=error keeps plugins' warnings off stderr but in bp-info --json") {
  EnvironmentVariables environment = kBadPluginVariables;
  environment.emplace_back("BACKPLANE_LOG_LEVEL", "error");
  const ChildResult result = run_bp_info({"--json"}, environment);
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.empty());
  const JsonValue info = parse_json(result.out);
  const std::vector<std::string> warnings = strings(info["warnings"]);
  for (const std::string& expected : bad_plugin_variable_warnings(info)) {
    CAPTURE(expected);
    CHECK(starts_one_of(warnings, expected));
  }
}

TEST_CASE("plugins shut down at exit in reverse load order") {
  const ChildResult result = run_bp_info(
      {},
      {{"BACKPLANE_PLUGIN_PATH", fixture_path("fixture") + ":" + fixture_path("fixture_thrower")}});
  REQUIRE(result.exit_code == 0);
  CHECK(contains(result.err, "fixture_thrower: shutdown\nfixture: shutdown\n"));
}

TEST_CASE("bp-info --help prints the usage and a bad flag exits 2 with it") {
  const ChildResult help = run_bp_info({"--help"}, {});
  CHECK(help.exit_code == 0);
  CHECK(help.out.starts_with("usage: bp-info [--json] [--check]"));
  CHECK(contains(help.out, "  --check    exit with status 1 when a plugin failed to load"));

  const ChildResult bad = run_bp_info({"--jsn"}, {});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.starts_with("bp-info: unknown argument '--jsn'"));
  CHECK(contains(bad.err, "usage: bp-info [--json] [--check]"));
  CHECK(bad.out.empty());
}

TEST_CASE("bp-info --check exits 1 and lists every plugin that failed and every refused kernel") {
  const ChildResult result = run_bp_info({"--check"}, {{"BACKPLANE_PLUGIN_PATH", fixture_dir()}});
  CHECK(result.exit_code == 1);
  CHECK(result.out.starts_with("bp-info --check: "));
  CHECK(contains(result.out, "\n  plugin " + fixture_path("garbage") +
                                 " failed to load: it is not a shared library"));
  CHECK(contains(result.out, "\n  plugin " + fixture_path("fixture_no_entry") +
                                 " failed to load: it does not export backplane_plugin_entry"));
  CHECK(contains(result.out, "\n  plugin fixture_schema_mismatch (" +
                                 fixture_path("fixture_schema_mismatch") +
                                 "): kernel mul.out was refused: its schema hash"));
  // Only the problems: not the listing of what loaded.
  CHECK_FALSE(contains(result.out, "Plugins loaded:"));
}

TEST_CASE("bp-info --check exits 1 for a refused kernel alone") {
  const std::string plugin = fixture_path("fixture_schema_mismatch");
  const ChildResult result =
      run_bp_info({"--check"}, {{"BACKPLANE_BACKENDS", "fixture_schema_mismatch"},
                                {"BACKPLANE_PLUGIN_PATH", plugin}});
  CHECK(result.exit_code == 1);
  CHECK(
      result.out.starts_with("bp-info --check: 2 problem(s):\n  plugin "
                             "fixture_schema_mismatch (" +
                             plugin + "): kernel mul.out was refused: "));
}

TEST_CASE("bp-info --check exits 0 when every plugin loaded with all its kernels") {
  const ChildResult result = run_bp_info({"--check"}, {{"BACKPLANE_BACKENDS", "cpu"}});
  CHECK(result.exit_code == 0);
  CHECK(result.out ==
        "bp-info --check: 1 plugin(s) loaded; none failed to load and no kernel "
        "was refused\n");
}

TEST_CASE("bp-info --check --json prints the JSON object and exits as --check does") {
  const ChildResult failing =
      run_bp_info({"--check", "--json"}, {{"BACKPLANE_PLUGIN_PATH", fixture_path("garbage")}});
  CHECK(failing.exit_code == 1);
  CHECK(failure_reason(parse_json(failing.out), fixture_path("garbage"))
            .starts_with("it is not a shared library"));

  const ChildResult passing = run_bp_info({"--json", "--check"}, {{"BACKPLANE_BACKENDS", "cpu"}});
  CHECK(passing.exit_code == 0);
  CHECK(plugin_names(parse_json(passing.out)) == std::vector<std::string>{"cpu"});
}

TEST_CASE("bp-info shows each plugin's counters as they are, in text and in --json") {
  const EnvironmentVariables environment{{"BACKPLANE_BACKENDS", "cpu"},
                                         {"BACKPLANE_CPU_PRIMITIVE_CACHE", "7"}};
  const JsonValue cpu = plugin_named(bp_info_json(environment), "cpu");
  REQUIRE(cpu["counters"].is_object());
  CHECK(cpu["counters"]["primitive_cache.capacity"].number() == 7);
  for (const char* name :
       {"primitive_cache.hits", "primitive_cache.misses", "primitive_cache.evictions",
        "primitive_cache.replacements", "primitive_cache.size", "packed_weights.hits",
        "packed_weights.packs", "packed_weights.unkept"}) {
    CAPTURE(name);
    // bp-info runs no op, so nothing was cached.
    CHECK(cpu["counters"][name].number() == 0);
  }
  CHECK(cpu["counters_error"].string().empty());

  const ChildResult human = run_bp_info({}, environment);
  CHECK(contains(human.out,
                 "  counters: primitive_cache.hits 0, primitive_cache.misses 0, "
                 "primitive_cache.evictions 0, primitive_cache.replacements 0, "
                 "primitive_cache.size 0, primitive_cache.capacity 7, packed_weights.hits 0, "
                 "packed_weights.packs 0, packed_weights.unkept 0\n"));
}
