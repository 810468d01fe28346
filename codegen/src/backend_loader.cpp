#include "backend_loader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iterator>
#include <map>
#include <string_view>

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

// The C++20 keywords and alternative tokens, which cannot name a namespace.
bool is_cpp_keyword(std::string_view word) {
  static constexpr std::string_view kKeywords[] = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "char8_t",     "char16_t",
      "char32_t",      "class",       "compl",
      "concept",       "const",       "consteval",
      "constexpr",     "constinit",   "const_cast",
      "continue",      "co_await",    "co_return",
      "co_yield",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "requires",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "thread_local",  "throw",       "true",
      "try",           "typedef",     "typeid",
      "typename",      "union",       "unsigned",
      "using",         "virtual",     "void",
      "volatile",      "wchar_t",     "while",
      "xor",           "xor_eq"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), word) != std::end(kKeywords);
}

// `1.0.0`, `2.1.0-rc1`, `1.0+acme.3`: digits and dots, then optional pre-release and build
// parts, as semantic versions are written.
bool is_version(const std::string& s) {
  const size_t core_end = s.find_first_of("-+");
  const std::string core = s.substr(0, core_end);
  const bool core_ok = !core.empty() && std::isdigit(static_cast<unsigned char>(core.front())) &&
                       std::isdigit(static_cast<unsigned char>(core.back())) &&
                       core.find("..") == std::string::npos &&
                       std::all_of(core.begin(), core.end(), [](char c) {
                         return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
                       });
  const std::string rest = core_end == std::string::npos ? "" : s.substr(core_end + 1);
  return core_ok && (core_end == std::string::npos || !rest.empty()) &&
         std::all_of(rest.begin(), rest.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+';
         });
}

// `bp::opencl`, `vendor::bp_plugin`: identifiers, none a keyword, joined by `::`.
bool is_cpp_namespace(const std::string& s) {
  size_t start = 0;
  while (true) {
    const size_t end = s.find("::", start);
    const std::string part = s.substr(start, end == std::string::npos ? end : end - start);
    if (part.empty() || std::isdigit(static_cast<unsigned char>(part[0])) || is_cpp_keyword(part) ||
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
  for (const NativeFunction* op : functions.kernel_ops()) structured.push_back(op->func.name.str());
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
    if (!is_version(config.version)) {
      throw CodegenError(location_of(path, version),
                         fmt::format("version '{}' is not a version such as 1.0.0, 2.1.0-rc1 or "
                                     "1.0.0+acme.3",
                                     config.version));
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
