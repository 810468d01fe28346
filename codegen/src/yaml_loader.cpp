#include "yaml_loader.h"

#include <fmt/format.h>

#include <iterator>
#include <set>

#include "schema_parser.h"
#include "spelling.h"
#include "validation.h"
#include "yaml_util.h"

namespace bp::codegen {

namespace {

constexpr const char* kEntryKeys[] = {
    "func",      "variants",  "structured", "meta",     "structured_delegate",
    "composite", "pointwise", "dtypes",     "dtypes_of"};

Variants parse_variants(const YAML::Node& node, const std::string& path) {
  const std::string text = scalar_text(node, path, "'variants'");
  Variants variants{false, false};
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string word = text.substr(start, comma - start);
    const size_t first = word.find_first_not_of(' ');
    const size_t last = word.find_last_not_of(' ');
    word = first == std::string::npos ? "" : word.substr(first, last - first + 1);
    if (word == "function") {
      variants.function = true;
    } else if (word == "method") {
      variants.method = true;
    } else {
      throw CodegenError(
          location_of(path, node)
              .shifted(static_cast<int>(start + (first == std::string::npos ? 0 : first))),
          fmt::format("unknown variant '{}' (expected 'function', 'method' or "
                      "'function, method')",
                      word));
    }
    start = comma + 1;
  }
  return variants;
}

FunctionSchema parse_func(const YAML::Node& node, const std::string& path) {
  const std::string text = scalar_text(node, path, "'func'");
  try {
    return parse_schema(text);
  } catch (const SchemaSyntaxError& e) {
    throw CodegenError(location_of(path, node).shifted(e.column() - 1),
                       fmt::format("bad schema: {}", e.message()));
  }
}

OperatorName parse_operator_name_value(const YAML::Node& node, const std::string& path) {
  const std::string text = scalar_text(node, path, "'structured_delegate'");
  OperatorName name;
  const size_t dot = text.find('.');
  name.name = text.substr(0, dot);
  if (dot != std::string::npos) name.overload_name = text.substr(dot + 1);
  return name;
}

DTypeClass parse_dtype_class(const YAML::Node& node, const std::string& path) {
  const std::string text = scalar_text(node, path, "'dtypes'");
  std::vector<std::string> names;
  std::string expected;
  for (const DTypeClass dtypes : kDTypeClasses) {
    if (text == dtype_class_name(dtypes)) return dtypes;
    names.emplace_back(dtype_class_name(dtypes));
    if (!expected.empty()) expected += names.size() == std::size(kDTypeClasses) ? " or " : ", ";
    expected += fmt::format("'{}'", names.back());
  }
  throw CodegenError(location_of(path, node),
                     fmt::format("unknown dtype class '{}' (expected {}){}", text, expected,
                                 did_you_mean(text, names)));
}

NativeFunction parse_entry(const YAML::Node& entry, const std::string& path) {
  if (!entry.IsMap()) {
    throw CodegenError(location_of(path, entry),
                       "each entry must be a mapping that starts with 'func: <schema>'");
  }
  check_keys(entry, {std::begin(kEntryKeys), std::end(kEntryKeys)}, path);
  const YAML::Node func = entry["func"];
  if (!func) throw CodegenError(location_of(path, entry), "entry has no 'func' key");

  NativeFunction f;
  f.location = location_of(path, func);
  f.func = parse_func(func, path);
  if (const YAML::Node variants = entry["variants"]) f.variants = parse_variants(variants, path);
  if (const YAML::Node structured = entry["structured"]) {
    f.structured = scalar_bool(structured, path, "'structured'");
  }
  if (const YAML::Node composite = entry["composite"]) {
    f.composite = scalar_bool(composite, path, "'composite'");
  }
  f.pointwise_location = f.location;
  if (const YAML::Node pointwise = entry["pointwise"]) {
    f.pointwise = scalar_bool(pointwise, path, "'pointwise'");
    f.pointwise_location = location_of(path, pointwise);
  }
  f.meta_location = f.location;
  if (const YAML::Node meta = entry["meta"]) {
    f.meta = scalar_text(meta, path, "'meta'");
    f.meta_location = location_of(path, meta);
  }
  f.dtypes_location = f.location;
  if (const YAML::Node dtypes = entry["dtypes"]) {
    f.dtypes = parse_dtype_class(dtypes, path);
    f.dtypes_location = location_of(path, dtypes);
  }
  f.dtypes_of_location = f.location;
  if (const YAML::Node dtypes_of = entry["dtypes_of"]) {
    f.dtypes_of = scalar_text(dtypes_of, path, "'dtypes_of'");
    f.dtypes_of_location = location_of(path, dtypes_of);
  }
  if (const YAML::Node delegate = entry["structured_delegate"]) {
    f.structured_delegate = parse_operator_name_value(delegate, path);
    f.delegate_location = location_of(path, delegate);
  }
  return f;
}

}  // namespace

NativeFunctions parse_native_functions(const std::string& yaml_text, const std::string& path) {
  const YAML::Node root = load_yaml(yaml_text, path);
  NativeFunctions functions;
  functions.path = path;
  if (!root.IsSequence()) {
    throw CodegenError(location_of(path, root),
                       "expected a list of entries, each '- func: <schema>'");
  }
  for (const YAML::Node& entry : root) functions.functions.push_back(parse_entry(entry, path));
  validate_native_functions(functions);
  return functions;
}

NativeFunctions load_native_functions(const std::string& path) {
  return parse_native_functions(read_text_file(path), path);
}

}  // namespace bp::codegen
