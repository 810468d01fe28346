#include <backplane/conformance/op_info.h>
#include <backplane/conformance/runner.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include "case_comparison.h"

namespace bp::conformance {

std::string_view name_of(OpStatus status) {
  switch (status) {
    case OpStatus::Pass: return "pass";
    case OpStatus::Fail: return "fail";
    case OpStatus::Unsupported: return "unsupported";
  }
  return "?";
}

namespace {

constexpr double kInfinite = std::numeric_limits<double>::infinity();

enum class Form { Functional, Out, InPlace };

// Each tensor argument (and each tensor of a list) through `transform`.
template <typename Transform>
OpArguments map_tensors(const OpArguments& args, Transform transform) {
  std::vector<ArgumentValue> values;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgumentValue& value = args[i];
    if (const Tensor* t = std::get_if<Tensor>(&value)) {
      values.emplace_back(transform(*t));
    } else if (const auto* list = std::get_if<std::vector<Tensor>>(&value)) {
      std::vector<Tensor> mapped;
      for (const Tensor& t : *list) mapped.push_back(transform(t));
      values.emplace_back(std::move(mapped));
    } else {
      values.push_back(value);
    }
  }
  return OpArguments(std::move(values));
}

// Calls visit(tensor) for each tensor argument (and each tensor of a list).
template <typename Visit>
void for_each_tensor(const OpArguments& args, Visit visit) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (const Tensor* t = std::get_if<Tensor>(&args[i])) visit(*t);
    if (const auto* list = std::get_if<std::vector<Tensor>>(&args[i])) {
      for (const Tensor& t : *list) visit(t);
    }
  }
}

// The reference computes floating values in Float64 where the op takes it: inputs, dtype
// arguments and out= tensors alike.
DType reference_dtype(DType dtype, bool widen) {
  return widen && is_floating_point(dtype) ? kFloat64 : dtype;
}

// Copies, so that an op that updates an input (batch norm's running statistics) leaves the
// sample as it was.
OpArguments reference_arguments(const OpArguments& host_args, bool widen) {
  OpArguments host = map_tensors(host_args, [&](const Tensor& t) {
    return t.to(reference_dtype(t.dtype(), widen), /*non_blocking=*/false, /*copy=*/true);
  });
  for (size_t i = 0; i < host.size(); ++i) {
    if (const DType* dtype = std::get_if<DType>(&host[i])) host[i] = reference_dtype(*dtype, widen);
  }
  return host;
}

std::vector<Tensor> empty_outputs(const std::vector<TensorSpec>& specs, Device device, bool widen) {
  std::vector<Tensor> outputs;
  for (const TensorSpec& spec : specs)
    outputs.push_back(empty(spec.sizes, reference_dtype(spec.dtype, widen), device));
  return outputs;
}

// `host_args`: the values the device's arguments hold, on the host.
std::vector<Tensor> run_reference(const KernelOp& op, const OpArguments& host_args,
                                  const std::vector<TensorSpec>& outputs) {
  const auto run = [&](bool widen) {
    const OpArguments host = reference_arguments(host_args, widen);
    if (op.call_functional && outputs.empty()) return op.call_functional(host);
    std::vector<Tensor> results = empty_outputs(outputs, Device::cpu(), widen);
    op.call_out(host, results);
    return results;
  };
  if (op.dtypes.contains(kFloat64)) {
    try {
      return run(true);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::NotImplemented) throw;
    }
  }
  return run(false);
}

std::string describe_arguments(const KernelOp& op, const OpArguments& args) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < args.size() && i < op.parameters.size(); ++i) {
    if (const Tensor* t = std::get_if<Tensor>(&args[i])) {
      parts.push_back(fmt::format("{} {} {}", op.parameters[i].name, shape_string(t->sizes().vec()),
                                  dtype_name(t->dtype())));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

class OpRunner {
 public:
  OpRunner(const KernelOp& op, Device device, const RunOptions& options, OpResult& result)
      : op_(op), device_(device), options_(options), result_(result) {}

  // A failed case (counted as run).
  void fail(const std::string& case_name, std::string error, double severity = kInfinite) {
    ++result_.cases;
    ++result_.failed;
    CaseFailure failure{case_name, std::move(error), severity};
    if (!result_.worst || severity > result_.worst->severity) result_.worst = failure;
    if (result_.failures.size() < options_.max_failures) result_.failures.push_back(failure);
  }

  void finish(const std::vector<DType>& dtypes) {
    for (const DType dtype : dtypes) {
      if (unsupported_by_dtype_[dtype] > 0 && ran_by_dtype_[dtype] == 0)
        result_.unsupported_dtypes.emplace_back(dtype_name(dtype));
    }
  }

  void run_sample(DType dtype, const SampleInput& sample) {
    const std::vector<Layout> layouts =
        sample.layouts ? std::vector<Layout>(std::begin(kAllLayouts), std::end(kAllLayouts))
                       : std::vector<Layout>{Layout::Contiguous};
    const bool has_functional = op_.call_functional && sample.outputs.empty();
    functional_dtypes_.clear();
    for (const Layout layout : layouts) {
      if (layout != Layout::Contiguous && !any_tensor_changes(sample.arguments, layout)) continue;
      run_case(dtype, sample, layout, has_functional ? Form::Functional : Form::Out);
    }
    if (has_functional) run_case(dtype, sample, Layout::Contiguous, Form::Out);
    if (op_.call_in_place) run_case(dtype, sample, Layout::Contiguous, Form::InPlace);
  }

 private:
  static bool any_tensor_changes(const OpArguments& args, Layout layout) {
    bool changes = false;
    for_each_tensor(args, [&](const Tensor& t) {
      changes = changes || (applies_to(layout, t.sizes().vec()) && t.numel() > 1);
    });
    return changes;
  }

  std::string_view form_name(Form form) const {
    switch (form) {
      case Form::Functional: return op_.functional_name;
      case Form::Out: return op_.name;
      case Form::InPlace: return op_.in_place_name;
    }
    return "";
  }

  void run_case(DType dtype, const SampleInput& sample, Layout layout, Form form) {
    const std::string case_name = fmt::format("{}, {}, {}, {}", dtype_name(dtype),
                                              sample.description, name_of(layout), form_name(form));
    OpArguments device_args = map_tensors(
        sample.arguments, [&](const Tensor& t) { return laid_out(t, layout, device_); });
    std::vector<Tensor> expected;
    try {
      expected = run_reference(
          op_, map_tensors(sample.arguments, [&](const Tensor& t) { return host_view(t, layout); }),
          sample.outputs);
    } catch (const Error& e) {
      return fail(case_name, fmt::format("the host reference refused the case ({}): the sample "
                                         "generator of {} makes a case the op does not define",
                                         e.what(), op_.name));
    }
    const size_t self = op_.parameter_index("self");
    if (form == Form::InPlace) {
      const Tensor* target =
          self < device_args.size() ? std::get_if<Tensor>(&device_args[self]) : nullptr;
      // In place only where the result fits `self` exactly.
      if (!target || expected.size() != 1 || expected[0].sizes() != target->sizes() ||
          !in_place_dtype_fits(dtype, *target, expected[0])) {
        return;
      }
      // A copy: on the host, laid_out gives the sample's own tensor, which later cases read.
      device_args[self] =
          laid_out(sample.arguments.tensor(self).clone(), Layout::Contiguous, device_);
    }
    ++result_.cases;
    std::vector<Tensor> actual;
    try {
      switch (form) {
        case Form::Functional: actual = op_.call_functional(device_args); break;
        case Form::Out: {
          actual = sample.outputs.empty() ? fresh_outputs(expected, dtype)
                                          : empty_outputs(sample.outputs, device_, false);
          op_.call_out(device_args, actual);
          break;
        }
        case Form::InPlace:
          op_.call_in_place(device_args);
          actual = {device_args.tensor(self)};
          break;
      }
    } catch (const Error& e) {
      if (e.code() == ErrorCode::NotImplemented) {
        ++result_.unsupported;
        ++unsupported_by_dtype_[dtype];
        return;
      }
      return fail(case_name, fmt::format("raised: {}", e.what()));
    }
    ++ran_by_dtype_[dtype];
    if (form == Form::Functional) {
      functional_dtypes_.clear();
      for (const Tensor& t : actual) functional_dtypes_.push_back(t.dtype());
    }
    if (actual.size() != expected.size()) {
      return fail(case_name, fmt::format("gave {} outputs where the reference gives {}",
                                         actual.size(), expected.size()));
    }
    std::optional<CaseFailure> worst;
    for (size_t i = 0; i < actual.size(); ++i) {
      const std::string_view name = i < op_.outputs.size() ? op_.outputs[i] : "output";
      std::optional<CaseFailure> failure = compare_output(op_, name, actual[i], expected[i]);
      if (failure && (!worst || failure->severity > worst->severity)) worst = std::move(failure);
    }
    if (worst) {
      worst->error += "; inputs " + describe_arguments(op_, device_args);
      fail(case_name, worst->error, worst->severity);
    }
  }

  // The dtype of output `i`: the functional form's on the device, or else the reference's
  // narrowed back to the sample's dtype where the reference widened it.
  DType output_dtype(size_t i, const Tensor& expected, DType dtype) const {
    if (i < functional_dtypes_.size()) return functional_dtypes_[i];
    return expected.dtype() == kFloat64 && is_floating_point(dtype) ? dtype : expected.dtype();
  }

  // The out= tensors, with no elements so that the op resizes them.
  std::vector<Tensor> fresh_outputs(const std::vector<Tensor>& expected, DType dtype) const {
    std::vector<Tensor> outputs;
    for (size_t i = 0; i < expected.size(); ++i)
      outputs.push_back(empty({0}, output_dtype(i, expected[i], dtype), device_));
    return outputs;
  }

  bool in_place_dtype_fits(DType dtype, const Tensor& self, const Tensor& expected) const {
    return output_dtype(0, expected, dtype) == self.dtype();
  }

  const KernelOp& op_;
  Device device_;
  const RunOptions& options_;
  OpResult& result_;
  std::map<DType, int64_t> ran_by_dtype_, unsupported_by_dtype_;
  // The dtypes of the current sample's functional outputs on the device, once it ran.
  std::vector<DType> functional_dtypes_;
};

}  // namespace

OpResult run_op(const KernelOp& op, Device device, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  OpResult result;
  result.op = std::string(op.name);
  const OpInfo* info = find_op_info(op.name);
  if (info == nullptr) {
    throw Error(ErrorCode::Internal,
                fmt::format("kernel op '{}' has no sample generator: add one to the conformance "
                            "library (conformance/src/samples_*.cpp)",
                            op.name));
  }
  std::vector<DType> dtypes;
  for (const DType dtype : plugin::dtypes_in(op.dtypes)) {
    if (options.dtypes.empty() ||
        std::find(options.dtypes.begin(), options.dtypes.end(), dtype) != options.dtypes.end())
      dtypes.push_back(dtype);
  }
  OpRunner runner(op, device, options, result);
  for (const DType dtype : dtypes) {
    std::vector<SampleInput> samples;
    try {
      samples = info->samples(dtype);
    } catch (const Error& e) {
      runner.fail(std::string(dtype_name(dtype)),
                  fmt::format("the sample generator failed on the host: {}", e.what()));
      continue;
    }
    for (const SampleInput& sample : samples) runner.run_sample(dtype, sample);
  }
  runner.finish(dtypes);
  if (result.failed > 0) {
    result.status = OpStatus::Fail;
  } else if (result.cases > 0 && result.unsupported == result.cases) {
    result.status = OpStatus::Unsupported;
    result.note = "the backend refused every case as unimplemented";
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace bp::conformance
