#include "layouts.h"

namespace networks {

std::vector<ParameterLayout> mlp_layout(const std::vector<int64_t>& widths) {
  std::vector<ParameterLayout> layout;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    const std::string layer = "layer" + std::to_string(i + 1);
    layout.push_back({layer + ".weight", {widths[i + 1], widths[i]}, Start::kUniform, widths[i]});
    layout.push_back({layer + ".bias", {widths[i + 1]}, Start::kUniform, widths[i]});
  }
  return layout;
}

std::vector<ParameterLayout> digits_cnn_layout() {
  return {
      {"conv1.weight", {16, 1, 3, 3}, Start::kUniform, 1 * 3 * 3},
      {"bn1.weight", {16}, Start::kOnes},
      {"bn1.bias", {16}, Start::kZeros},
      {"conv2.weight", {32, 16, 3, 3}, Start::kUniform, 16 * 3 * 3},
      {"bn2.weight", {32}, Start::kOnes},
      {"bn2.bias", {32}, Start::kZeros},
      {"fc1.weight", {64, 32 * 2 * 2}, Start::kUniform, 32 * 2 * 2},
      {"fc1.bias", {64}, Start::kUniform, 32 * 2 * 2},
      {"fc2.weight", {kDigitsClasses, 64}, Start::kUniform, 64},
      {"fc2.bias", {kDigitsClasses}, Start::kUniform, 64},
  };
}

std::vector<std::string> digits_cnn_buffer_names() {
  return {"bn1.running_mean", "bn1.running_var", "bn2.running_mean", "bn2.running_var"};
}

}  // namespace networks
