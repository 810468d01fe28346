// Small helpers shared by the YAML readers: positions, file reading, and yaml-cpp's exceptions
// turned into CodegenErrors.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "diagnostics.h"

namespace bp::codegen {

// yaml-cpp counts lines and columns from 0; messages count from 1.
SourceLocation location_of(const std::string& path, const YAML::Mark& mark);
SourceLocation location_of(const std::string& path, const YAML::Node& node);

std::string read_text_file(const std::string& path);  // CodegenError when unreadable

// YAML::Load, with a syntax error reported at its position.
YAML::Node load_yaml(const std::string& text, const std::string& path);

// Checks that every key of `map` is one of `known` and appears once; the error names the key,
// the known ones and a close match, or the line of the first occurrence.
void check_keys(const YAML::Node& map, const std::vector<std::string>& known,
                const std::string& path);

// The scalar's text; an error naming `what` when the node is not a scalar.
std::string scalar_text(const YAML::Node& node, const std::string& path, const std::string& what);
bool scalar_bool(const YAML::Node& node, const std::string& path, const std::string& what);

}  // namespace bp::codegen
