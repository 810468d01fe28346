// Elementwise functions of one tensor: neg, abs, exp, log, sqrt, tanh, sigmoid, relu, gelu, silu.
#include "op_test_support.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace optest {
namespace {

struct UnaryOp {
  std::string name;
  std::vector<DType> dtypes;
  DType (*result_dtype)(DType);
  std::function<double(double)> reference;
  std::function<Tensor(const Tensor&)> call;
  std::function<void(Tensor& out, const Tensor&)> call_out;
  std::function<void(Tensor& self)> call_in_place;
};

DType same_dtype(DType dtype) { return dtype; }

double gelu_reference(double x) { return 0.5 * x * std::erfc(-x / std::numbers::sqrt2); }

double gelu_tanh_reference(double x) {
  const double k = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
  return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

// log and sqrt of negative samples are NaN on both sides, so every sample is a valid input.
const std::vector<UnaryOp>& unary_ops() {
  static const std::vector<UnaryOp> ops = {
      {"neg", declared_dtypes<kernel_dtypes::neg_out>(), same_dtype, [](double x) { return -x; },
       [](const Tensor& x) { return bp::neg(x); },
       [](Tensor& out, const Tensor& x) { bp::neg_out(out, x); }, [](Tensor& x) { x.neg_(); }},
      {"abs", declared_dtypes<kernel_dtypes::abs_out>(), same_dtype,
       [](double x) { return std::abs(x); }, [](const Tensor& x) { return bp::abs(x); },
       [](Tensor& out, const Tensor& x) { bp::abs_out(out, x); }, [](Tensor& x) { x.abs_(); }},
      {"exp", all_dtypes(), floating_result, [](double x) { return std::exp(x); },
       [](const Tensor& x) { return bp::exp(x); },
       [](Tensor& out, const Tensor& x) { bp::exp_out(out, x); }, [](Tensor& x) { x.exp_(); }},
      {"log", all_dtypes(), floating_result, [](double x) { return std::log(x); },
       [](const Tensor& x) { return bp::log(x); },
       [](Tensor& out, const Tensor& x) { bp::log_out(out, x); }, [](Tensor& x) { x.log_(); }},
      {"sqrt", all_dtypes(), floating_result, [](double x) { return std::sqrt(x); },
       [](const Tensor& x) { return bp::sqrt(x); },
       [](Tensor& out, const Tensor& x) { bp::sqrt_out(out, x); }, [](Tensor& x) { x.sqrt_(); }},
      {"tanh", all_dtypes(), floating_result, [](double x) { return std::tanh(x); },
       [](const Tensor& x) { return bp::tanh(x); },
       [](Tensor& out, const Tensor& x) { bp::tanh_out(out, x); }, [](Tensor& x) { x.tanh_(); }},
      {"sigmoid", all_dtypes(), floating_result, [](double x) { return 1 / (1 + std::exp(-x)); },
       [](const Tensor& x) { return bp::sigmoid(x); },
       [](Tensor& out, const Tensor& x) { bp::sigmoid_out(out, x); },
       [](Tensor& x) { x.sigmoid_(); }},
      {"relu", declared_dtypes<kernel_dtypes::relu_out>(), same_dtype,
       [](double x) { return x < 0 ? 0 : x; }, [](const Tensor& x) { return bp::relu(x); },
       [](Tensor& out, const Tensor& x) { bp::relu_out(out, x); }, [](Tensor& x) { x.relu_(); }},
      {"gelu", declared_dtypes<kernel_dtypes::gelu_out>(), same_dtype, gelu_reference,
       [](const Tensor& x) { return bp::gelu(x); },
       [](Tensor& out, const Tensor& x) { bp::gelu_out(out, x); }, [](Tensor& x) { x.gelu_(); }},
      {"gelu(approximate='tanh')", declared_dtypes<kernel_dtypes::gelu_out>(), same_dtype,
       gelu_tanh_reference, [](const Tensor& x) { return bp::gelu(x, "tanh"); },
       [](Tensor& out, const Tensor& x) { bp::gelu_out(out, x, "tanh"); },
       [](Tensor& x) { x.gelu_("tanh"); }},
      {"silu", all_dtypes(), floating_result, [](double x) { return x / (1 + std::exp(-x)); },
       [](const Tensor& x) { return bp::silu(x); },
       [](Tensor& out, const Tensor& x) { bp::silu_out(out, x); }, [](Tensor& x) { x.silu_(); }},
  };
  return ops;
}

// Whether `device`'s backend implements the op's kernel ("gelu.out" for both gelu entries).
bool runs_on(Device device, const UnaryOp& op) {
  return provides(device, op.name.substr(0, op.name.find('(')) + ".out");
}

Values expected_values(const UnaryOp& op, const Tensor& x) {
  Values values = values_of(x);
  for (double& v : values) v = op.reference(v);
  return values;
}

}  // namespace

TEST_CASE("unary ops match the reference for every dtype and input layout") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const UnaryOp& op : unary_ops()) {
      if (!runs_on(device, op)) continue;
      for (const DType dtype : op.dtypes) {
        for (const Layout layout : kAllLayouts) {
          INFO(op.name << " " << name_of(dtype) << " " << name_of(layout));
          const Tensor x = sample_tensor({4, 5}, dtype, layout, 20, device);
          check_tensor(op.call(x), {4, 5}, op.result_dtype(dtype), expected_values(op, x));
        }
      }
    }
  }
}

TEST_CASE("unary ops on empty, 1-element and 0-dim tensors") {
  const Shape shapes[] = {{0}, {2, 0, 3}, {1}, {}};
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const UnaryOp& op : unary_ops()) {
      if (!runs_on(device, op)) continue;
      for (const DType dtype : op.dtypes) {
        for (const Shape& shape : shapes) {
          INFO(op.name << " " << name_of(dtype) << " " << shape_string(shape));
          const Tensor x = sample_tensor(shape, dtype, Layout::Contiguous, 21, device);
          check_tensor(op.call(x), shape, op.result_dtype(dtype), expected_values(op, x));
        }
      }
    }
  }
}

TEST_CASE("unary ops write into out= tensors and update self in place") {
  for (const Device device : test_devices()) {
    INFO("device " << device.str());
    for (const UnaryOp& op : unary_ops()) {
      if (!runs_on(device, op)) continue;
      for (const DType dtype : op.dtypes) {
        for (const Layout layout : kWritableLayouts) {
          INFO(op.name << " " << name_of(dtype) << " " << name_of(layout));
          const Tensor x = sample_tensor({3, 4}, dtype, Layout::Transposed, 22, device);
          Tensor out = empty_tensor({3, 4}, op.result_dtype(dtype), layout, device);
          op.call_out(out, x);
          check_tensor(out, {3, 4}, op.result_dtype(dtype), expected_values(op, x));

          if (op.result_dtype(dtype) != dtype) continue;  // the result would not fit in self
          Tensor self = sample_tensor({3, 4}, dtype, layout, 23, device);
          const Values expected = expected_values(op, self);
          op.call_in_place(self);
          check_tensor(self, {3, 4}, dtype, expected);
        }
      }
    }
  }
}

TEST_CASE("unary ops at special values: NaN, infinities, zeros, and finite values of any size") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Values specials = {nan, inf, -inf, 0.0, -0.0, -30, 30, -1e10, 1e10, -3e38, 3e38};
  for (const Device device : test_devices()) {
    for (const UnaryOp& op : unary_ops()) {
      if (!runs_on(device, op)) continue;
      for (const DType dtype : {bp::kFloat32, bp::kFloat64}) {
        INFO("device " << device.str() << " " << op.name << " " << name_of(dtype));
        const Tensor x = make_tensor(specials, {11}, dtype, device);
        check_tensor(op.call(x), {11}, dtype, expected_values(op, x));
      }
    }
  }
}

TEST_CASE("gelu names the valid approximations when given another") {
  const Tensor x = make_tensor({1, 2}, {2}, bp::kFloat32);
  check_error([&] { bp::gelu(x, "fast"); }, "'none' or 'tanh'");
}

}  // namespace optest
