#include "backend_loader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iterator>
#include <map>

#include "spelling.h"
#include "yaml_util.h"

namespace bp::codegen {

namespace {

constexpr const char* kKeys[] = {"backend", "cpp_namespace", "version", "supported"};

bool is_backend_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// `bp::opencl`, `vendor::bp_plugin`: identifiers joined by `::`.
bool is_cpp_namespace(const std::string& s) {
  size_t start = 0;
  while (true) {
    const size_t end = s.find("::", start);
    const std::string part = s.substr(start, end == std::string::npos ? end : end - start);
    if (part.empty() || std::isdigit(static_cast<unsigned char>(part[0])) ||
        !std::all_of(part.begin(), part.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        })) {
      return false;
    }
    if (end == std::string::npos) return true;
    start = end + 2;
  }
}

// Why a backend cannot list `name`, with what to list instead.
[[noreturn]] void reject_op(const std::string& name, const SourceLocation& location,
                            const NativeFunctions& functions) {
  if (const NativeFunction* f = functions.find(name)) {
    if (f->structured_delegate) {
      throw CodegenError(location,
                         fmt::format("'{}' is not a structured op; list its structured op '{}' "
                                     "instead (the core runs '{}' through it)",
                                     name, f->structured_delegate->str(), name));
    }
    throw CodegenError(location,
                       fmt::format("'{}' is not a structured op: it is a composite written in "
                                   "core over other ops, so backends do not implement it",
                                   name));
  }
  std::vector<std::string> structured;
  for (const NativeFunction* op : functions.kernel_ops())
    structured.push_back(op->func.name.str());
  // An op named right but with another overload (sum.out, softmax, ADD.OUT): list that op's
  // kernel overloads, which spelling distance would not find.
  const auto base_of = [](std::string_view op) {
    std::string base(op.substr(0, op.find('.')));
    std::transform(base.begin(), base.end(), base.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return base;
  };
  std::vector<std::string> overloads;
  for (const std::string& op : structured) {
    if (base_of(op) == base_of(name)) overloads.push_back("'" + op + "'");
  }
  if (!overloads.empty()) {
    throw CodegenError(location, fmt::format("unknown operator '{}'; did you mean {}?", name,
                                             fmt::join(overloads, " or ")));
  }
  const std::string suggestion = did_you_mean(name, structured);
  throw CodegenError(location,
                     suggestion.empty()
                         ? fmt::format("unknown operator '{}': {} has no such op", name,
                                       std::filesystem::path(functions.path).filename().string())
                         : fmt::format("unknown operator '{}'{}", name, suggestion));
}

}  // namespace

BackendConfig parse_backend_config(const std::string& yaml_text, const std::string& path,
                                   const NativeFunctions& functions) {
  const YAML::Node root = load_yaml(yaml_text, path);
  if (!root.IsMap()) {
    throw CodegenError(location_of(path, root),
                       "expected a mapping with the keys backend, cpp_namespace, version and "
                       "supported");
  }
  check_keys(root, {std::begin(kKeys), std::end(kKeys)}, path);
  auto required = [&](const char* key) {
    const YAML::Node node = root[key];
    if (!node) {
      throw CodegenError(location_of(path, root), fmt::format("missing required key '{}'", key));
    }
    return node;
  };

  BackendConfig config;
  config.path = path;
  const YAML::Node backend = required("backend");
  config.backend = scalar_text(backend, path, "'backend'");
  if (!is_backend_name(config.backend)) {
    throw CodegenError(
        location_of(path, backend),
        fmt::format("backend name '{}' may contain only letters, digits and '_'", config.backend));
  }
  const YAML::Node cpp_namespace = required("cpp_namespace");
  config.cpp_namespace = scalar_text(cpp_namespace, path, "'cpp_namespace'");
  if (!is_cpp_namespace(config.cpp_namespace)) {
    throw CodegenError(location_of(path, cpp_namespace),
                       fmt::format("cpp_namespace '{}' is not a C++ namespace such as 'bp::opencl'",
                                   config.cpp_namespace));
  }
  if (const YAML::Node version = root["version"]) {
    config.version = scalar_text(version, path, "'version'");
    if (config.version.empty() || config.version.find_first_of("\"\\\n") != std::string::npos) {
      throw CodegenError(location_of(path, version),
                         "version must be a plain version string such as 1.0.0");
    }
  }
  const YAML::Node supported = required("supported");
  if (!supported.IsSequence()) {
    throw CodegenError(location_of(path, supported),
                       "'supported' must be a list of op names such as '- add.out'");
  }
  std::map<std::string, SourceLocation> first_listed;
  for (const YAML::Node& entry : supported) {
    const std::string name = scalar_text(entry, path, "an entry of 'supported'");
    const SourceLocation location = location_of(path, entry);
    const NativeFunction* f = functions.find(name);
    if (!f || !f->structured) reject_op(name, location, functions);
    auto [it, inserted] = first_listed.emplace(name, location);
    if (!inserted) {
      throw CodegenError(
          location, fmt::format("'{}' is listed twice (first at line {})", name, it->second.line));
    }
    config.supported.push_back({f, location});
  }
  return config;
}

BackendConfig load_backend_config(const std::string& path, const NativeFunctions& functions) {
  return parse_backend_config(read_text_file(path), path, functions);
}

}  // namespace bp::codegen
