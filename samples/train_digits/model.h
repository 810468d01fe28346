// The network the sample trains: two convolution blocks (conv2d without bias, batch_norm, relu,
// max_pool2d) over the 8x8 images, then two linear layers, giving one logit per digit.
#pragma once

#include <backplane/backplane.h>

#include <vector>

class DigitsNet {
 public:
  // Parameters drawn as PyTorch's Conv2d and Linear draw them (uniform within 1/sqrt(fan_in)),
  // from Backplane's generator, then moved to `device`.
  explicit DigitsNet(bp::Device device);

  // images: [N, 1, 8, 8]; the result: [N, 10] logits. In training mode batch_norm normalizes
  // with the batch's statistics and updates its running ones; otherwise it uses the running
  // ones.
  bp::Tensor forward(const bp::Tensor& images, bool training);

  std::vector<bp::Tensor> parameters() const;
  // State that training updates but does not train: batch_norm's running statistics.
  std::vector<bp::Tensor> buffers() const;

 private:
  // batch_norm over `channels` channels: its parameters and running statistics.
  struct BatchNorm {
    bp::Tensor weight, bias, running_mean, running_var;
    BatchNorm(int64_t channels, bp::Device device);
    bp::Tensor forward(const bp::Tensor& input, bool training);
  };

  bp::Tensor conv1_;
  BatchNorm norm1_;
  bp::Tensor conv2_;
  BatchNorm norm2_;
  bp::Tensor fc1_weight_, fc1_bias_;
  bp::Tensor fc2_weight_, fc2_bias_;
};
