// The plugin's switches and settings. BACKPLANE_CUDA_ALLOW_TF32: float32 matrix products stay exact
// unless it is 1; CTest runs the product case twice, without the variable and with it set to 1.
#include "cuda_test_support.h"

#include "runtime/environment.h"

#include <cstdlib>
#include <cstring>

namespace {

TEST_CASE("the plugin's switches take 0 or 1, and any other value keeps the default") {
  using bp::cuda::switch_value;
  CHECK_FALSE(switch_value("BACKPLANE_CUDA_ALLOW_TF32", nullptr, false));
  CHECK(switch_value("BACKPLANE_CUDA_CUDNN", nullptr, true));
  CHECK_FALSE(switch_value("BACKPLANE_CUDA_ALLOW_TF32", "0", false));
  CHECK_FALSE(switch_value("BACKPLANE_CUDA_CUDNN", "0", true));
  CHECK(switch_value("BACKPLANE_CUDA_ALLOW_TF32", "1", false));
  CHECK_FALSE(switch_value("BACKPLANE_CUDA_ALLOW_TF32", "yes", false));  // warns on stderr
  CHECK(switch_value("BACKPLANE_CUDA_CUDNN", "", true));
}

TEST_CASE("BACKPLANE_CUDA_CONV_LAYOUT takes auto, nchw or nhwc, and any other value keeps auto") {
  using bp::cuda::conv_layout_value;
  using bp::cuda::ConvLayout;
  CHECK(conv_layout_value(nullptr) == ConvLayout::Measured);
  CHECK(conv_layout_value("auto") == ConvLayout::Measured);
  CHECK(conv_layout_value("nchw") == ConvLayout::Nchw);
  CHECK(conv_layout_value("nhwc") == ConvLayout::Nhwc);
  CHECK(conv_layout_value("NHWC") == ConvLayout::Measured);  // warns on stderr
  CHECK(conv_layout_value("") == ConvLayout::Measured);      // warns on stderr
}

TEST_CASE("float32 products round their inputs to TF32 exactly when BACKPLANE_CUDA_ALLOW_TF32=1") {
  SKIP_WITHOUT_CUDA_DEVICE();
  const char* setting = std::getenv("BACKPLANE_CUDA_ALLOW_TF32");
  const bool allowed = setting != nullptr && std::strcmp(setting, "1") == 0;
  const bp::Device gpu = cudatest::cuda_devices().front();
  // 1 + 2^-12 needs 13 significant bits: float32 keeps it, TF32 (11) rounds it to 1. Each sum of
  // 256 such products is exact in float32: 256 + 2^-4.
  const bp::Tensor a = bp::full({256, 256}, 1.0 + 1.0 / 4096, bp::kFloat32, gpu);
  const bp::Tensor b = bp::ones({256, 256}, bp::kFloat32, gpu);
  const float corner = bp::mm(a, b).select(0, 0).select(0, 0).item<float>();
  CHECK(corner == (allowed ? 256.0f : 256.0625f));
}

}  // namespace
