#include "dispatch/validation.h"

#include "dispatch/dispatch.h"
#include "dispatch/out_arg.h"
#include "memory/caching_allocator.h"
#include "support/log.h"
#include "tensor/copy_contiguous.h"
#include "tensor/host_address.h"

#include <backplane/error.h>
#include <backplane/factories.h>
#include <backplane/sdk/dtype_set.hpp>
#include <backplane/sdk/half.hpp>
#include <backplane/sdk/strided_loop.hpp>
#include <backplane/sdk/tolerance.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <string_view>

namespace bp::detail {

constinit std::atomic<bool> g_validating{false};

namespace {

std::atomic<bool> g_fatal{false};
std::atomic<bool> g_compare{false};

enum class FindingKind { Unwritten, InputWritten, PastEnd, DepartsFromHost };

struct FindingStore {
  std::mutex mutex;                // guards both members
  std::set<std::string> reported;  // op, device type, argument and kind of each finding
  std::vector<std::string> messages;
};

FindingStore& store() {
  // Never freed: a kernel may run in a static destructor at exit.
  static FindingStore* const findings = new FindingStore();
  return *findings;
}

void report(OpId op, Device device, std::string_view argument, FindingKind kind,
            std::string_view what) {
  const std::string message = fmt::format("BACKPLANE_VALIDATE{}: {} on {}: {}",
                                          kind == FindingKind::DepartsFromHost ? "=compare" : "",
                                          kOpNames[static_cast<size_t>(op)], device.str(), what);
  bool first = false;
  {
    FindingStore& findings = store();
    std::lock_guard lock(findings.mutex);
    first = findings.reported
                .insert(fmt::format("{}/{}/{}/{}", static_cast<size_t>(op), device.type(), argument,
                                    static_cast<int>(kind)))
                .second;
    if (first) findings.messages.push_back(message);
  }
  if (g_fatal.load(std::memory_order_relaxed)) throw Error(ErrorCode::Backend, message);
  if (first) log(LogLevel::Error, "{}", message);
}

// One tensor the kernel writes or reads, named as its argument ("tensors[1]" in a list).
struct Checked {
  std::string name;
  const Tensor* tensor;
};

// The arguments' tensors that have elements.
std::vector<Checked> tensors_of(std::initializer_list<ValidatedArgument> arguments) {
  std::vector<Checked> tensors;
  for (const ValidatedArgument& argument : arguments) {
    if (argument.tensor() && argument.tensor()->defined() && argument.tensor()->numel() > 0) {
      tensors.push_back({argument.name(), argument.tensor()});
    }
    if (argument.list()) {
      const std::vector<Tensor>& list = *argument.list();
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i].defined() && list[i].numel() > 0) {
          tensors.push_back({fmt::format("{}[{}]", argument.name(), i), &list[i]});
        }
      }
    }
  }
  return tensors;
}

// The bytes a tensor spans as the host sees them: the host's own memory itself, else a copy
// (through the backend's copy functions, no kernel), which write_back() returns to the device.
class HostBytes {
 public:
  explicit HostBytes(const Tensor& t) : tensor_(t), span_(byte_span(t)) {
    auto* const base = static_cast<std::byte*>(t.impl()->storage()->data());
    if (t.device().is_cpu()) {
      data_ = base + span_.begin;
      return;
    }
    const auto length = static_cast<int64_t>(size());
    on_device_ = Tensor(make_intrusive<TensorImpl>(t.impl()->storage(), kUInt8, DimVector{length},
                                                   DimVector{1}, span_.begin));
    copy_ = empty({length}, kUInt8, Device::cpu());
    copy_contiguous(on_device_, copy_);
    data_ = static_cast<std::byte*>(host_address(copy_));
  }

  std::byte* data() { return data_; }
  size_t size() const { return static_cast<size_t>(span_.end - span_.begin); }

  void write_back() {
    if (on_device_.defined()) copy_contiguous(copy_, on_device_);
  }

  // Calls visit(index, element) for each element of the view, in row-major order: only those,
  // as the span of a view with gaps holds other tensors' elements too.
  template <typename Visit>
  void for_each_element(Visit visit) {
    const auto element_size = static_cast<int64_t>(tensor_.element_size());
    const IntArrayRef sizes = tensor_.sizes(), strides = tensor_.strides();
    const plugin::StridedLoop<1> loop({sizes.data(), sizes.size()},
                                      {std::span<const int64_t>(strides.data(), strides.size())});
    int64_t index = 0;
    loop.for_each_row(
        [&](const plugin::Offsets<1>& first, const plugin::Offsets<1>& step, int64_t length) {
          for (int64_t k = 0; k < length; ++k) {
            visit(index++, data_ + ((first[0] + k * step[0]) * element_size - span_.begin));
          }
        },
        {tensor_.storage_offset()});
  }

 private:
  const Tensor& tensor_;
  ByteSpan span_;
  Tensor on_device_;  // the span as bytes on the device; undefined on the host
  Tensor copy_;       // its copy on the host
  std::byte* data_ = nullptr;
};

uint64_t checksum(const Tensor& t) {
  HostBytes bytes(t);
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// Two poisons per dtype, as element bits (the low element_size bytes, little-endian). The
// floating ones are quiet NaNs with a payload of their own; arithmetic makes NaNs with an empty
// payload, or passes on an input's.
uint64_t poison_bits(DType dtype, int round) {
  switch (dtype) {
    case kFloat32: return round == 0 ? 0x7FF0A5A5u : 0x7FE15A5Au;
    case kFloat64: return round == 0 ? 0x7FF8A5A5A5A5A5A5u : 0x7FFC5A5A5A5A5A5Au;
    case kFloat16: return round == 0 ? 0x7EA5u : 0x7F5Au;
    case kBFloat16: return round == 0 ? 0x7FE5u : 0x7FDAu;
    default: return round == 0 ? 0xA5A5A5A5A5A5A5A5u : 0x5A5A5A5A5A5A5A5Au;
  }
}

// Whether no kernel computes `dtype`'s poisons from values that hold none: NaNs of their own
// payload, and bytes that are neither false nor true.
bool poison_is_distinct(DType dtype) { return is_floating_point(dtype) || dtype == kBool; }

void poison(const Tensor& t, int round) {
  const uint64_t bits = poison_bits(t.dtype(), round);
  const size_t element_size = t.element_size();
  HostBytes bytes(t);
  bytes.for_each_element(
      [&](int64_t, std::byte* element) { std::memcpy(element, &bits, element_size); });
  bytes.write_back();
}

// Marks the elements of `t` that hold the poison of `round`; with `only`, among those marked
// there. Returns how many are marked.
int64_t mark_poisoned(const Tensor& t, int round, std::vector<bool>& marks, bool only) {
  const uint64_t bits = poison_bits(t.dtype(), round);
  const size_t element_size = t.element_size();
  marks.resize(static_cast<size_t>(t.numel()));
  int64_t count = 0;
  HostBytes bytes(t);
  bytes.for_each_element([&](int64_t i, const std::byte* element) {
    const auto index = static_cast<size_t>(i);
    const bool poisoned = (!only || marks[index]) && std::memcmp(element, &bits, element_size) == 0;
    marks[index] = poisoned;
    count += poisoned ? 1 : 0;
  });
  return count;
}

void report_unwritten(OpId op, Device device, const Checked& output, const std::vector<bool>& marks,
                      int64_t count) {
  const auto first = std::find(marks.begin(), marks.end(), true) - marks.begin();
  report(op, device, output.name, FindingKind::Unwritten,
         fmt::format("the kernel left {} of {} elements of '{}' unwritten (first at index {})",
                     count, output.tensor->numel(), output.name, first));
}

// Reads the guard zone of every written tensor's storage after a call of the kernel.
void check_guard_zones(OpId op, Device device, std::initializer_list<ValidatedArgument> written) {
  for (const ValidatedArgument& argument : written) {
    const Tensor* output = argument.tensor();
    if (output == nullptr || !output->defined()) continue;
    const StorageImpl& storage = *output->impl()->storage();
    const size_t past_end = check_guard_zone(storage);
    if (past_end == 0) continue;
    report(op, device, argument.name(), FindingKind::PastEnd,
           fmt::format("the kernel wrote {} bytes past the end of the storage of '{}' ({} bytes)",
                       past_end, argument.name(), storage.nbytes()));
  }
}

// Poisons the outputs and checksums the inputs around the call, then reports what it finds.
void check_kernel_call(OpId op, Device device, std::initializer_list<ValidatedArgument> written,
                       std::initializer_list<ValidatedArgument> read, KernelCall call) {
  const std::vector<Checked> outputs = tensors_of(written);
  const std::vector<Checked> inputs = tensors_of(read);
  const auto shares_memory_with = [](const Checked& tensor, const std::vector<Checked>& others) {
    return std::any_of(others.begin(), others.end(), [&](const Checked& other) {
      return may_share_memory(*tensor.tensor, *other.tensor);
    });
  };

  // An output that is also an input (in place) keeps its values, and counts as neither.
  std::vector<const Checked*> poisoned;
  bool in_place = false;
  for (const Checked& output : outputs) {
    if (shares_memory_with(output, inputs)) {
      in_place = true;
    } else {
      poisoned.push_back(&output);
    }
  }
  std::vector<std::pair<const Checked*, uint64_t>> checksums;
  for (const Checked& input : inputs) {
    if (!shares_memory_with(input, outputs))
      checksums.emplace_back(&input, checksum(*input.tensor));
  }
  for (const Checked* output : poisoned) poison(*output->tensor, 0);

  call();
  check_guard_zones(op, device, written);

  bool input_written = false;
  for (const auto& [input, sum] : checksums) {
    if (checksum(*input->tensor) == sum) continue;
    input_written = true;
    report(op, device, input->name, FindingKind::InputWritten,
           fmt::format("the kernel wrote its input '{}'", input->name));
  }

  std::vector<std::vector<bool>> marks(poisoned.size());
  std::vector<size_t> suspects;  // indices into poisoned
  for (size_t i = 0; i < poisoned.size(); ++i) {
    if (mark_poisoned(*poisoned[i]->tensor, 0, marks[i], false) > 0) suspects.push_back(i);
  }
  if (suspects.empty()) return;
  // Running the kernel again must compute what it computed: its inputs are as they were.
  if (in_place || input_written) {
    for (size_t i : suspects) {
      const Checked& output = *poisoned[i];
      if (!poison_is_distinct(output.tensor->dtype())) continue;
      report_unwritten(op, device, output, marks[i],
                       std::count(marks[i].begin(), marks[i].end(), true));
    }
    return;
  }
  for (size_t i : suspects) poison(*poisoned[i]->tensor, 1);
  call();
  check_guard_zones(op, device, written);
  for (size_t i : suspects) {
    const Checked& output = *poisoned[i];
    const int64_t count = mark_poisoned(*output.tensor, 1, marks[i], true);
    if (count > 0) report_unwritten(op, device, output, marks[i], count);
  }
}

// "[4, 5] Float32", with the strides of a view that is not contiguous (such as an input
// broadcast to the output's shape): what the kernel was given.
std::string describe_tensor(const Tensor& t) {
  if (!t.defined()) return "None";
  std::string text =
      fmt::format("[{}] {}", fmt::join(t.sizes(), ", "), plugin::dtype_constant_name(t.dtype()));
  if (!t.is_contiguous()) text += fmt::format(" strides [{}]", fmt::join(t.strides(), ", "));
  return text;
}

std::string describe_arguments(std::initializer_list<ValidatedArgument> arguments) {
  std::vector<std::string> parts;
  for (const ValidatedArgument& argument : arguments) {
    if (const std::vector<Tensor>* list = argument.list()) {
      std::vector<std::string> tensors;
      for (const Tensor& t : *list) tensors.push_back(describe_tensor(t));
      parts.push_back(fmt::format("{} [{}]", argument.name(), fmt::join(tensors, ", ")));
    } else {
      parts.push_back(
          fmt::format("{} {}", argument.name(),
                      argument.tensor() ? describe_tensor(*argument.tensor()) : "None"));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// One element's value, read from its bytes: floating dtypes as a double, the others exactly.
struct ElementValue {
  double real = 0;
  int64_t integer = 0;
};

ElementValue read_element(DType dtype, const std::byte* bytes) {
  const auto read = [&]<typename T>(T value) {
    std::memcpy(&value, bytes, sizeof value);
    return value;
  };
  switch (dtype) {
    case kFloat32: return {read(float{}), 0};
    case kFloat64: return {read(double{}), 0};
    case kFloat16: return {static_cast<float>(read(Half{})), 0};
    case kBFloat16: return {static_cast<float>(read(BFloat16{})), 0};
    case kInt8: return {0, read(int8_t{})};
    case kUInt8: return {0, read(uint8_t{})};
    case kInt32: return {0, read(int32_t{})};
    case kInt64: return {0, read(int64_t{})};
    case kBool: return {0, read(uint8_t{}) != 0 ? 1 : 0};
  }
  return {};
}

// A value as its dtype prints it: a float32 result as the shortest float that reads back.
std::string format_element(DType dtype, ElementValue value) {
  if (!is_floating_point(dtype)) return fmt::format("{}", value.integer);
  if (dtype == kFloat64) return fmt::format("{}", value.real);
  return fmt::format("{}", static_cast<float>(value.real));
}

// Compares one output of the kernel with the host's result for it, and reports the element
// that departs most.
void compare_output(OpId op, Device device, const char* name, const Tensor& output,
                    const Tensor& expected, std::initializer_list<ValidatedArgument> written,
                    std::initializer_list<ValidatedArgument> read) {
  if (output.numel() == 0) return;
  const DType dtype = output.dtype();
  const plugin::Tolerance tolerance =
      plugin::conformance_tolerance(kOpNames[static_cast<size_t>(op)], dtype);
  const auto* host = static_cast<const std::byte*>(expected.const_data_ptr());
  const size_t element_size = output.element_size();
  int64_t departing = 0;
  int64_t worst = -1;
  double worst_excess = 0;  // the error beyond what the tolerance allows
  ElementValue worst_actual, worst_expected;
  HostBytes bytes(output);
  bytes.for_each_element([&](int64_t i, const std::byte* element) {
    const ElementValue actual = read_element(dtype, element);
    const ElementValue wanted = read_element(dtype, host + static_cast<size_t>(i) * element_size);
    double excess = 0;
    if (is_floating_point(dtype)) {
      if (plugin::within_tolerance(actual.real, wanted.real, tolerance)) return;
      const double error = std::fabs(actual.real - wanted.real);
      excess = std::isfinite(error)
                   ? error - tolerance.absolute - tolerance.relative * std::fabs(wanted.real)
                   : HUGE_VAL;
    } else {
      if (actual.integer == wanted.integer) return;
      excess = std::fabs(static_cast<double>(actual.integer) - static_cast<double>(wanted.integer));
    }
    ++departing;
    if (worst < 0 || excess > worst_excess) {
      worst = i;
      worst_excess = excess;
      worst_actual = actual;
      worst_expected = wanted;
    }
  });
  if (departing == 0) return;
  const bool floating = is_floating_point(dtype);
  const double error = floating ? std::fabs(worst_actual.real - worst_expected.real)
                                : std::fabs(static_cast<double>(worst_actual.integer) -
                                            static_cast<double>(worst_expected.integer));
  const double allowed =
      floating ? tolerance.absolute + tolerance.relative * std::fabs(worst_expected.real) : 0;
  report(op, device, name, FindingKind::DepartsFromHost,
         fmt::format("'{}' departs from the host reference: worst element at index {} is {} "
                     "where the host gives {} (error {:.3g}, tolerance {:.3g}; {} of {} elements "
                     "depart); inputs {}; outputs {}",
                     name, worst, format_element(dtype, worst_actual),
                     format_element(dtype, worst_expected), error, allowed, departing,
                     output.numel(), describe_arguments(read), describe_arguments(written)));
}

void compare_with_host(OpId op, Device device, std::initializer_list<ValidatedArgument> written,
                       std::initializer_list<ValidatedArgument> read,
                       const HostReference& reference) {
  for (const auto& [output, expected] : reference.outputs()) {
    const auto argument = std::find_if(written.begin(), written.end(),
                                       [&](const auto& a) { return a.tensor() == output; });
    const char* name = argument != written.end() ? argument->name() : "?";
    compare_output(op, device, name, *output, expected, written, read);
  }
}

}  // namespace

Tensor HostReference::input(const Tensor& t) {
  if (!t.defined() || t.device().is_cpu()) return t;
  if (t.numel() == 0) return empty(t.sizes(), t.dtype(), Device::cpu());
  // The bytes the view spans, then the view itself over them, gaps and all.
  const ByteSpan span = byte_span(t);
  const auto length = span.end - span.begin;
  const Tensor on_device(make_intrusive<TensorImpl>(t.impl()->storage(), kUInt8, DimVector{length},
                                                    DimVector{1}, span.begin));
  const Tensor copy = empty({length}, kUInt8, Device::cpu());
  copy_contiguous(on_device, copy);
  const auto element_size = static_cast<int64_t>(t.element_size());
  return Tensor(make_intrusive<TensorImpl>(copy.impl()->storage(), t.dtype(), DimVector(t.sizes()),
                                           DimVector(t.strides()),
                                           t.storage_offset() - span.begin / element_size));
}

std::optional<Tensor> HostReference::input(const std::optional<Tensor>& t) {
  if (!t) return std::nullopt;
  return input(*t);
}

std::vector<Tensor> HostReference::input(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> host;
  host.reserve(tensors.size());
  for (const Tensor& t : tensors) host.push_back(input(t));
  return host;
}

Tensor HostReference::output(const Tensor& t) {
  Tensor host = empty(t.sizes(), t.dtype(), Device::cpu());
  outputs_.emplace_back(&t, host);
  return host;
}

void start_validation(bool compare, bool fatal) {
  g_fatal.store(fatal, std::memory_order_relaxed);
  g_compare.store(compare, std::memory_order_relaxed);
  g_validating.store(true, std::memory_order_relaxed);
}

void validate_kernel_call(OpId op, Device device, std::initializer_list<ValidatedArgument> written,
                          std::initializer_list<ValidatedArgument> read, KernelCall call,
                          HostCall on_host) {
  // The host runs first: an in-place kernel overwrites the inputs it would need.
  std::optional<HostReference> reference;
  if (g_compare.load(std::memory_order_relaxed) && !device.is_cpu() &&
      has_kernel(op, Device::cpu())) {
    on_host(reference.emplace());
  }
  check_kernel_call(op, device, written, read, call);
  if (reference) compare_with_host(op, device, written, read, *reference);
}

std::vector<std::string> validation_findings() {
  FindingStore& findings = store();
  std::lock_guard lock(findings.mutex);
  return findings.messages;
}

}  // namespace bp::detail
