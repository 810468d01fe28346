// Every loaded device against the host: one call of every kernel op, on inputs of a few
// hundred elements in mixed layouts. A backend that loads inherits this suite; on the host
// itself each op runs twice and must agree with itself (which catches reads of uninitialised
// memory).
#include "op_test_support.h"

#include <algorithm>
#include <cmath>

namespace optest {
namespace {

struct DeviceCase {
  std::string op;
  std::function<std::vector<Tensor>(Device)> run;
  // Added to the dtype's tolerance where a backend may round intermediate values to the dtype.
  double extra_absolute = 0;
};

Tensor floats(const Shape& sizes, Layout layout, uint64_t seed, Device device) {
  return sample_tensor(sizes, bp::kFloat32, layout, seed, device);
}

const std::vector<DeviceCase>& device_cases() {
  static const std::vector<DeviceCase> cases = {
      {"add.out",
       [](Device d) {
         return std::vector{bp::add(floats({17, 33}, Layout::Transposed, 1, d),
                                    floats({33}, Layout::Sliced, 2, d), 0.5)};
       }},
      {"sub.out",
       [](Device d) {
         return std::vector{bp::sub(floats({17, 33}, Layout::Sliced, 3, d),
                                    floats({17, 1}, Layout::Contiguous, 4, d))};
       }},
      {"mul.out",
       [](Device d) {
         return std::vector{bp::mul(sample_tensor({17, 33}, bp::kInt32, Layout::Transposed, 5, d),
                                    sample_tensor({17, 33}, bp::kInt32, Layout::Expanded, 6, d))};
       }},
      {"div.out",
       [](Device d) {
         return std::vector{bp::div(floats({17, 33}, Layout::Contiguous, 7, d),
                                    bp::add(floats({17, 33}, Layout::Transposed, 8, d), 10))};
       }},
      {"maximum.out",
       [](Device d) {
         return std::vector{bp::maximum(floats({17, 33}, Layout::Sliced, 9, d),
                                        floats({17, 33}, Layout::Transposed, 10, d))};
       }},
      {"minimum.out",
       [](Device d) {
         return std::vector{bp::minimum(floats({17, 33}, Layout::Expanded, 11, d),
                                        floats({17, 33}, Layout::Contiguous, 12, d))};
       }},
      {"eq.Tensor_out",
       [](Device d) {
         return std::vector{bp::eq(sample_tensor({17, 33}, bp::kInt8, Layout::Transposed, 13, d),
                                   sample_tensor({33}, bp::kInt8, Layout::Contiguous, 14, d))};
       }},
      {"lt.Tensor_out",
       [](Device d) {
         return std::vector{bp::lt(floats({17, 33}, Layout::Sliced, 15, d),
                                   floats({17, 33}, Layout::Contiguous, 16, d))};
       }},
      {"gt.Tensor_out",
       [](Device d) {
         return std::vector{bp::gt(floats({17, 33}, Layout::Transposed, 17, d),
                                   floats({17, 33}, Layout::Sliced, 18, d))};
       }},
      {"where.self_out",
       [](Device d) {
         return std::vector{bp::where(sample_tensor({17, 33}, bp::kBool, Layout::Sliced, 19, d),
                                      floats({17, 33}, Layout::Transposed, 20, d),
                                      floats({33}, Layout::Contiguous, 21, d))};
       }},
      {"neg.out",
       [](Device d) {
         return std::vector{bp::neg(floats({17, 33}, Layout::Transposed, 22, d))};
       }},
      {"abs.out",
       [](Device d) {
         return std::vector{bp::abs(sample_tensor({17, 33}, bp::kInt64, Layout::Sliced, 23, d))};
       }},
      {"exp.out",
       [](Device d) {
         return std::vector{bp::exp(floats({17, 33}, Layout::Transposed, 24, d))};
       }},
      {"log.out",
       [](Device d) {
         return std::vector{bp::log(bp::abs(floats({17, 33}, Layout::Sliced, 25, d)))};
       }},
      {"sqrt.out",
       [](Device d) {
         return std::vector{bp::sqrt(bp::abs(floats({17, 33}, Layout::Transposed, 26, d)))};
       }},
      {"tanh.out",
       [](Device d) {
         return std::vector{bp::tanh(floats({17, 33}, Layout::Expanded, 27, d))};
       }},
      {"sigmoid.out",
       [](Device d) {
         return std::vector{bp::sigmoid(floats({17, 33}, Layout::Sliced, 28, d))};
       }},
      {"relu.out",
       [](Device d) {
         return std::vector{bp::relu(floats({17, 33}, Layout::Transposed, 29, d))};
       }},
      {"gelu.out",
       [](Device d) {
         return std::vector{bp::gelu(floats({17, 33}, Layout::Contiguous, 30, d), "tanh")};
       }},
      {"sum.IntList_out",
       [](Device d) {
         return std::vector{bp::sum(floats({5, 17, 33}, Layout::Transposed, 31, d), {0, 2})};
       }},
      {"mean.out",
       [](Device d) {
         return std::vector{bp::mean(floats({5, 17, 33}, Layout::Sliced, 32, d), {1}, true)};
       }},
      {"amax.out",
       [](Device d) {
         return std::vector{bp::amax(floats({5, 17, 33}, Layout::Transposed, 33, d), {-1})};
       }},
      {"max.dim_max",
       [](Device d) {
         auto [values, indices] = bp::max(floats({17, 33}, Layout::Sliced, 34, d), 0);
         return std::vector{values, indices};
       }},
      {"argmax.out",
       [](Device d) {
         return std::vector{bp::argmax(floats({17, 33}, Layout::Transposed, 35, d), 1)};
       }},
      {"softmax.int_out",
       [](Device d) {
         return std::vector{bp::softmax(floats({17, 33}, Layout::Transposed, 36, d), 0)};
       }},
      {"log_softmax.int_out",
       [](Device d) {
         return std::vector{bp::log_softmax(floats({17, 33}, Layout::Sliced, 37, d), 1)};
       }},
      {"native_layer_norm.out",
       [](Device d) {
         auto [out, mean, rstd] = bp::native_layer_norm(
             floats({17, 33}, Layout::Transposed, 38, d), {33}, floats({33}, Layout::Sliced, 39, d),
             floats({33}, Layout::Contiguous, 40, d), 1e-5);
         return std::vector{out, mean, rstd};
       }},
      {"mm.out",
       [](Device d) {
         return std::vector{bp::mm(floats({17, 33}, Layout::Transposed, 41, d),
                                   floats({33, 9}, Layout::Sliced, 42, d))};
       }},
      {"bmm.out",
       [](Device d) {
         return std::vector{bp::bmm(floats({3, 17, 33}, Layout::Sliced, 43, d),
                                    floats({3, 33, 9}, Layout::Transposed, 44, d))};
       }},
      {"addmm.out",
       [](Device d) {
         return std::vector{bp::addmm(floats({9}, Layout::Contiguous, 45, d),
                                      floats({17, 33}, Layout::Transposed, 46, d),
                                      floats({33, 9}, Layout::Contiguous, 47, d), 0.5, 2)};
       }},
      {"cat.out",
       [](Device d) {
         return std::vector{bp::cat({floats({17, 3}, Layout::Transposed, 48, d),
                                     sample_tensor({17, 5}, bp::kInt32, Layout::Sliced, 49, d)},
                                    1)};
       }},
      {"copy_",
       [](Device d) {
         return std::vector{
             floats({17, 33}, Layout::Transposed, 50, d).to(bp::kBFloat16),
             sample_tensor({17, 33}, bp::kInt64, Layout::Sliced, 51, d).contiguous()};
       }},
      {"fill_.Scalar",
       [](Device d) {
         Tensor t = empty_tensor({17, 33}, bp::kFloat16, Layout::Sliced, d);
         t.fill_(1.5);
         return std::vector{t};
       }},
      {"arange.start_out",
       [](Device d) { return std::vector{bp::arange(-5, 100, 0.75, bp::kFloat32, d)}; }},
      {"silu.out",
       [](Device d) {
         return std::vector{bp::silu(floats({17, 33}, Layout::Sliced, 40, d))};
       }},
      {"rms_norm.out",
       [](Device d) {
         return std::vector{bp::rms_norm(floats({9, 33}, Layout::Transposed, 41, d), {33},
                                         floats({33}, Layout::Contiguous, 42, d))};
       }},
      {"_addmm_activation.out",
       [](Device d) {
         return std::vector{
             bp::_addmm_activation(floats({24}, Layout::Contiguous, 55, d),
                                   floats({9, 13}, Layout::Transposed, 56, d),
                                   floats({13, 24}, Layout::Sliced, 57, d), 1, 1, true),
             bp::_addmm_activation(floats({9, 24}, Layout::Sliced, 58, d),
                                   floats({9, 13}, Layout::Contiguous, 59, d),
                                   floats({13, 24}, Layout::Transposed, 60, d), 0.5, 2)};
       }},
      {"_scaled_dot_product_fused_attention.out",
       [](Device d) {
         // bfloat16 with head dim 64 and unit-stride rows: a case every fusing backend takes.
         const auto heads_second = [d](int64_t length, uint64_t seed) {
           return floats({2, length, 3, 64}, Layout::Contiguous, seed, d)
               .to(bp::kBFloat16)
               .transpose(1, 2);
         };
         return std::vector{bp::_scaled_dot_product_fused_attention(
             heads_second(70, 52), heads_second(40, 53), heads_second(40, 54), true)};
       },
       // A flash-attention kernel rounds the probabilities to bfloat16 (relative error 2^-9)
       // before multiplying them with the values, which lie within [-4, 4]: each output, a
       // weighted average of values, may move by 2^-9 * 4.
       std::ldexp(4.0, -9)},
      {"batch_norm_inference.out",
       [](Device d) {
         return std::vector{bp::batch_norm_inference(
             floats({3, 5, 4, 6}, Layout::Sliced, 43, d), floats({5}, Layout::Contiguous, 44, d),
             floats({5}, Layout::Contiguous, 45, d), floats({5}, Layout::Contiguous, 46, d),
             bp::add(bp::abs(floats({5}, Layout::Contiguous, 47, d)), 1), 1e-5)};
       }},
      {"conv2d.out",
       [](Device d) {
         return std::vector{bp::conv2d(floats({2, 6, 11, 9}, Layout::Transposed, 48, d),
                                       floats({4, 3, 3, 3}, Layout::Contiguous, 49, d),
                                       floats({4}, Layout::Contiguous, 50, d), {2, 1}, {1, 2},
                                       {1, 2}, 2)};
       }},
      {"max_pool2d.out",
       [](Device d) {
         return std::vector{bp::max_pool2d(floats({2, 3, 11, 9}, Layout::Sliced, 51, d), {3, 2},
                                           {2}, {1}, {1}, true)};
       }},
      {"avg_pool2d.out",
       [](Device d) {
         return std::vector{bp::avg_pool2d(floats({2, 3, 11, 9}, Layout::Transposed, 52, d), {3},
                                           {2}, {1}, true, false)};
       }},
      {"adaptive_avg_pool2d.out",
       [](Device d) {
         return std::vector{
             bp::adaptive_avg_pool2d(floats({2, 3, 11, 9}, Layout::Contiguous, 53, d), {4, 3})};
       }},
      {"embedding.out",
       [](Device d) {
         return std::vector{bp::embedding(floats({10, 33}, Layout::Sliced, 54, d),
                                          bp::arange(9, -1, -2, bp::kInt64, d).view({1, 5}))};
       }},
      {"index_select.out",
       [](Device d) {
         return std::vector{bp::index_select(floats({17, 33}, Layout::Transposed, 55, d), 1,
                                             bp::arange(0, 33, 4, bp::kInt32, d))};
       }},
      {"threshold_backward.grad_input",
       [](Device d) {
         return std::vector{bp::threshold_backward(floats({17, 33}, Layout::Sliced, 56, d),
                                                   floats({17, 33}, Layout::Transposed, 57, d),
                                                   0.25)};
       }},
      {"gelu_backward.grad_input",
       [](Device d) {
         return std::vector{bp::gelu_backward(floats({17, 33}, Layout::Transposed, 58, d),
                                              floats({17, 33}, Layout::Contiguous, 59, d),
                                              "tanh")};
       }},
      {"_softmax_backward_data.out",
       [](Device d) {
         const Tensor y = bp::softmax(floats({17, 33}, Layout::Contiguous, 60, d), 0);
         return std::vector{bp::_softmax_backward_data(floats({17, 33}, Layout::Transposed, 61, d),
                                                       y, 0, bp::kFloat32)};
       }},
      {"_log_softmax_backward_data.out",
       [](Device d) {
         const Tensor y = bp::log_softmax(floats({17, 33}, Layout::Sliced, 62, d), 1);
         return std::vector{bp::_log_softmax_backward_data(
             floats({17, 33}, Layout::Contiguous, 63, d), y, 1, bp::kFloat32)};
       }},
      {"native_layer_norm_backward.out",
       [](Device d) {
         const Tensor x = floats({17, 33}, Layout::Transposed, 64, d);
         const Tensor weight = floats({33}, Layout::Contiguous, 65, d);
         const auto [out, mean, rstd] = bp::native_layer_norm(x, {33}, weight, std::nullopt, 1e-5);
         const auto [dx, dweight, dbias] = bp::native_layer_norm_backward(
             floats({17, 33}, Layout::Sliced, 66, d), x, {33}, mean, rstd, weight, std::nullopt);
         return std::vector{dx, dweight, dbias};
       },
       1e-5},
      {"embedding_dense_backward.out",
       [](Device d) {
         return std::vector{bp::embedding_dense_backward(
             floats({2, 5, 33}, Layout::Sliced, 67, d),
             make_tensor({1, 6, 1, 2, 0, 1, 6, 6, 3, 1}, {2, 5}, bp::kInt32, d), 7, 2, true)};
       }},
      {"index_add.out",
       [](Device d) {
         const Tensor index = make_tensor({3, 0, 3, 16}, {4}, bp::kInt64, d);
         return std::vector{bp::index_add(floats({17, 33}, Layout::Transposed, 69, d), 0, index,
                                          floats({4, 33}, Layout::Sliced, 70, d), 0.5)};
       }},
      {"nll_loss_forward.output",
       [](Device d) {
         const Tensor target = make_tensor({3, 0, -100, 32, 3}, {5}, bp::kInt64, d);
         const auto [loss, total_weight] = bp::nll_loss_forward(
             floats({5, 33}, Layout::Sliced, 71, d), target,
             floats({33}, Layout::Contiguous, 72, d), 1, -100);
         return std::vector{loss, total_weight};
       }},
      {"nll_loss_backward.grad_input",
       [](Device d) {
         const Tensor target = make_tensor({3, 0, -100, 32, 3}, {5}, bp::kInt64, d);
         return std::vector{bp::nll_loss_backward(
             floats({5}, Layout::Contiguous, 73, d), floats({5, 33}, Layout::Transposed, 74, d),
             target, std::nullopt, 0, -100, bp::zeros({}, bp::kFloat32, d))};
       }},
      {"_sgd_step.out",
       [](Device d) {
         Tensor param = floats({17, 33}, Layout::Transposed, 75, d);
         Tensor buffer = floats({17, 33}, Layout::Contiguous, 76, d);
         bp::_sgd_step_out(param, buffer, param, floats({17, 33}, Layout::Sliced, 77, d), buffer,
                           0.1, 0.9, 0.0, 0.01, true, false);
         return std::vector{param, buffer};
       }},
      {"_adamw_step.out",
       [](Device d) {
         Tensor param = floats({17, 33}, Layout::Sliced, 78, d);
         Tensor exp_avg = floats({17, 33}, Layout::Contiguous, 79, d);
         Tensor exp_avg_sq = bp::abs(floats({17, 33}, Layout::Contiguous, 80, d));
         bp::_adamw_step_out(param, exp_avg, exp_avg_sq, param,
                             floats({17, 33}, Layout::Transposed, 81, d), exp_avg, exp_avg_sq,
                             1e-3, 0.9, 0.999, 0.01, 1e-8, 3);
         return std::vector{param, exp_avg, exp_avg_sq};
       },
       1e-6},
  };
  return cases;
}

}  // namespace

TEST_CASE("the device cases cover every kernel op") {
  const std::vector<std::string> kernel_ops = bp::runtime_info().kernel_ops;
  REQUIRE_FALSE(kernel_ops.empty());
  for (const std::string& op : kernel_ops) {
    const bool covered = std::any_of(device_cases().begin(), device_cases().end(),
                                     [&](const DeviceCase& c) { return c.op == op; });
    CHECK_MESSAGE(covered, "no device case runs " << op);
  }
}

TEST_CASE("every device computes what the host computes") {
  const Device host;
  for (const Device device : test_devices()) {
    for (const DeviceCase& c : device_cases()) {
      if (!provides(device, c.op)) continue;
      INFO("device " << device.str() << " " << c.op);
      const std::vector<Tensor> expected = c.run(host);
      const std::vector<Tensor> actual = c.run(device);
      REQUIRE(actual.size() == expected.size());
      for (size_t i = 0; i < actual.size(); ++i) {
        INFO("output " << i);
        check_tensor(actual[i], shape_of(expected[i]), expected[i].dtype(), values_of(expected[i]),
                     c.extra_absolute);
      }
    }
  }
}

TEST_CASE("the cpu plugin provides every kernel op and describes the host") {
  const bp::RuntimeInfo info = bp::runtime_info();
  const auto cpu = std::find_if(info.plugins.begin(), info.plugins.end(),
                                [](const bp::PluginInfo& p) { return p.name == "cpu"; });
  REQUIRE_MESSAGE(cpu != info.plugins.end(), "the cpu plugin did not load");
  CHECK(cpu->ops == info.kernel_ops);
  CHECK(cpu->refused_kernels.empty());
  REQUIRE(cpu->devices.size() == 1);
  const bp::DeviceInfo& host = cpu->devices.front();
  CHECK(host.device == Device::cpu());
  CHECK_MESSAGE(host.name.find("threads)") != std::string::npos, "device name: " << host.name);
  CHECK(host.total_memory > 0);
}

}  // namespace optest
