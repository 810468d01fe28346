// What the core generator writes for the real ops.yaml, checked line by line where the
// contract (docs/generated-code.md) is precise.
#include "gen_core.h"

#include <backplane/abi.h>
#include <fmt/format.h>

#include <map>

#include "derivatives_loader.h"
#include "signatures.h"
#include "test_support.h"
#include "yaml_loader.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

const NativeFunctions& ops() {
  static const NativeFunctions functions = load_native_functions(ops_yaml_path().string());
  return functions;
}

const Derivatives& derivatives() {
  static const Derivatives loaded = load_derivatives(derivatives_yaml_path().string(), ops());
  return loaded;
}

bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

}  // namespace

TEST_CASE("core generation writes eleven files under the two output folders") {
  const auto files = generate_core(ops(), derivatives(), "pub", "int");
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(f.path.generic_string());
  CHECK(paths == std::vector<std::string>{
                     "pub/backplane/generated/Functions.h",
                     "pub/backplane/generated/TensorMethods.inc",
                     "pub/backplane/generated/TensorMethodsInline.h",
                     "pub/backplane/sdk/kernel_dtypes.h",
                     "int/core_generated/OpTable.h",
                     "int/core_generated/MetaFunctions.h",
                     "int/core_generated/Kernels.h",
                     "int/core_generated/CompositeFunctions.h",
                     "int/core_generated/Functions.cpp",
                     "int/core_generated/Autograd.h",
                     "int/core_generated/Autograd.cpp",
                 });
}

TEST_CASE("Functions.h: functional, out= and composite overloads, outputs first") {
  const std::string h = generate_functions_h(ops());
  CHECK(contains(
      h, "\nTensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);\n"));
  CHECK(contains(h,
                 "\nTensor& add_out(Tensor& out, const Tensor& self, const Tensor& other, const "
                 "Scalar& alpha = 1);\n"));
  CHECK(contains(
      h, "\nTensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);\n"));
  CHECK(contains(h,
                 "\nstd::tuple<Tensor&, Tensor&> max_out(Tensor& max, Tensor& max_values, const "
                 "Tensor& self, int64_t dim, bool keepdim = false);\n"));
  CHECK(contains(h,
                 "\nstd::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = "
                 "false);\n"));
  CHECK(contains(h,
                 "\nTensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim = false, "
                 "std::optional<DType> dtype = std::nullopt);\n"));
  CHECK(
      contains(h, "\nTensor gelu(const Tensor& self, std::string_view approximate = \"none\");\n"));
  CHECK(contains(
      h, "\nTensor amax(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);\n"));
  CHECK(contains(h, "\nTensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);\n"));
  CHECK(contains(h,
                 "\nTensor arange(const Scalar& end, std::optional<DType> dtype = std::nullopt, "
                 "std::optional<Device> device = std::nullopt);\n"));
  CHECK(contains(h, "\nTensor& neg_(Tensor& self);\n"));
  CHECK(contains(h, "\nTensor& fill_(Tensor& self, const Scalar& value);\n"));
  // A default before a parameter without one cannot be C++: out= moved first drops none here,
  // but a positional default followed by required outputs keeps only the trailing run.
  CHECK(contains(h,
                 "\nTensor& arange_out(Tensor& out, const Scalar& start, const Scalar& end, const "
                 "Scalar& step = 1);\n"));
}

TEST_CASE("method-only overloads are declared in bp::detail, composites' too") {
  const std::string h = generate_functions_h(ops());
  const std::string detail = h.substr(h.find("namespace detail {"));
  CHECK(contains(
      detail,
      "\nTensor& method_add__Tensor(Tensor& self, const Tensor& other, const Scalar& alpha);\n"));
  CHECK(contains(
      detail,
      "\nTensor& method_add__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha);\n"));
  CHECK(contains(detail,
                 "\nTensor& method_copy_(Tensor& self, const Tensor& src, bool non_blocking);\n"));
  CHECK_FALSE(contains(h.substr(0, h.find("namespace detail {")), " add_("));
}

TEST_CASE("Tensor methods: receiver is self, const unless self is written") {
  const std::string inc = generate_tensor_methods_inc(ops());
  CHECK(contains(inc, "\nTensor add(const Tensor& other, const Scalar& alpha = 1) const;\n"));
  CHECK(contains(inc, "\nTensor& add_(const Tensor& other, const Scalar& alpha = 1);\n"));
  CHECK(contains(inc, "\nTensor where(const Tensor& condition, const Tensor& other) const;\n"));
  CHECK(contains(inc,
                 "\nstd::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;\n"));
  CHECK(contains(inc, "\nTensor& copy_(const Tensor& src, bool non_blocking = false);\n"));
  CHECK_FALSE(contains(inc, "#pragma once"));  // included inside the class body

  const std::string inl = generate_tensor_methods_inline_h(ops());
  CHECK(contains(
      inl,
      "\ninline Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {\n"
      "  return bp::where(condition, *this, other);\n}\n"));
  CHECK(contains(inl,
                 "\ninline Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {\n"
                 "  return bp::detail::method_add__Tensor(*this, other, alpha);\n}\n"));
  CHECK(contains(inl, "\ninline Tensor& Tensor::neg_() {\n  return bp::neg_(*this);\n}\n"));
}

TEST_CASE("views and copies: const methods returning the view, same call syntax as before") {
  const std::string inc = generate_tensor_methods_inc(ops());
  CHECK(contains(inc, "\nTensor view(IntArrayRef size) const;\n"));
  CHECK(contains(inc,
                 "\nTensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt, "
                 "std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;\n"));
  CHECK(contains(inc, "\nTensor squeeze() const;\nTensor squeeze(int64_t dim) const;\n"));
  CHECK(contains(inc,
                 "\nTensor to(DType dtype, bool non_blocking = false, bool copy = false) const;\n"
                 "Tensor to(Device device, std::optional<DType> dtype = std::nullopt, "
                 "bool non_blocking = false, bool copy = false) const;\n"
                 "Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) "
                 "const;\n"));
  const std::string h = generate_functions_h(ops());
  CHECK(contains(h, "\nTensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);\n"));
  CHECK(contains(h,
                 "\nTensor method_to_dtype(const Tensor& self, DType dtype, bool non_blocking, "
                 "bool copy);\n"));
  CHECK_FALSE(contains(h, "\nTensor view("));  // method only, as in PyTorch
}

TEST_CASE("defaults appear on declarations only") {
  for (const std::string& text :
       {generate_tensor_methods_inline_h(ops()), generate_functions_cpp(ops(), derivatives())}) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] == ' ' || line[0] == '/' || line.back() != '{') continue;
      CAPTURE(line);
      CHECK_FALSE(contains(line, " = "));
    }
  }
}

TEST_CASE("C++ overloads of one name never take the same argument types") {
  // Two overloads are ambiguous for some call when, for an argument count both accept, their
  // parameter types agree position by position.
  std::map<std::string, std::vector<CppSignature>> by_name;
  for (const NativeFunction& f : ops().functions) {
    const CppSignature sig = function_signature(f);
    by_name[sig.name].push_back(sig);
  }
  auto required = [](const CppSignature& s) {
    size_t n = 0;
    while (n < s.parameters.size() && !s.parameters[n].default_value) ++n;
    return n;
  };
  for (const auto& [name, overloads] : by_name) {
    for (size_t i = 0; i < overloads.size(); ++i) {
      for (size_t j = i + 1; j < overloads.size(); ++j) {
        const CppSignature& a = overloads[i];
        const CppSignature& b = overloads[j];
        for (size_t n = std::max(required(a), required(b));
             n <= std::min(a.parameters.size(), b.parameters.size()); ++n) {
          bool same = true;
          for (size_t k = 0; k < n; ++k)
            same = same && a.parameters[k].type == b.parameters[k].type;
          CAPTURE(name);
          CAPTURE(n);
          CHECK_FALSE(same);
        }
      }
    }
  }
}

TEST_CASE("Functions.cpp runs meta on copies, then the kernel on what meta left") {
  const std::string cpp = generate_functions_cpp(ops(), derivatives());
  SUBCASE("a functional delegate allocates its output") {
    CHECK(contains(cpp,
                   "Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {\n"
                   "  if (autograd::detail::needs_recording(self, other)) [[unlikely]]\n"
                   "    return autograd::generated::add_Tensor(self, other, alpha);\n"
                   "  Tensor self_ = self;\n"
                   "  Tensor other_ = other;\n"
                   "  auto specs = meta::binary_with_alpha(self_, other_, alpha);\n"
                   "  Tensor out = detail::allocate_output(specs[0]);\n"
                   "  detail::kernels::add_out(self_, other_, alpha, out);\n"
                   "  return out;\n}\n"));
  }
  SUBCASE("an out= overload checks the given tensor, against the inputs as the op allows") {
    CHECK(contains(cpp,
                   "Tensor& add_out(Tensor& out, const Tensor& self, const Tensor& other, const "
                   "Scalar& alpha) {\n"
                   "  autograd::detail::check_not_recorded(\"add.out\", false, self, other, out);\n"
                   "  Tensor self_ = self;\n"
                   "  Tensor other_ = other;\n"
                   "  auto specs = meta::binary_with_alpha(self_, other_, alpha);\n"
                   "  const detail::ReadTensors read_views{self_, other_};\n"
                   "  detail::OutArg out_arg(out, specs[0], detail::OutArg::Kind::Out, "
                   "\"add.out\", \"out\", read_views, detail::Aliasing::SameView);\n"
                   "  detail::kernels::add_out(self_, other_, alpha, out_arg.target());\n"
                   "  out_arg.finish();\n"
                   "  return out;\n}\n"));
  }
  SUBCASE("an in-place delegate writes self, checked as InPlace") {
    CHECK(contains(cpp,
                   "Tensor& detail::method_add__Tensor(Tensor& self, const Tensor& other, const "
                   "Scalar& alpha) {\n"
                   "  autograd::detail::check_not_recorded(\"add_.Tensor\", true, self, other);\n"
                   "  Tensor self_ = self;\n"
                   "  Tensor other_ = other;\n"
                   "  auto specs = meta::binary_with_alpha(self_, other_, alpha);\n"
                   "  const detail::ReadTensors read_views{self_, other_};\n"
                   "  detail::OutArg out_arg(self, specs[0], detail::OutArg::Kind::InPlace, "
                   "\"add_.Tensor\", \"self\", read_views, detail::Aliasing::SameView);\n"
                   "  detail::kernels::add_out(self_, other_, alpha, out_arg.target());\n"
                   "  out_arg.finish();\n"
                   "  return self;\n}\n"));
    CHECK(contains(cpp,
                   "Tensor& neg_(Tensor& self) {\n"
                   "  autograd::detail::check_not_recorded(\"neg_\", true, self);\n"
                   "  Tensor self_ = self;\n"
                   "  auto specs = meta::unary(self_);\n"
                   "  const detail::ReadTensors read_views{self_};\n"
                   "  detail::OutArg out_arg(self, specs[0], detail::OutArg::Kind::InPlace, "
                   "\"neg_\", \"self\", read_views, detail::Aliasing::SameView);\n"));
  }
  SUBCASE("an op that is not pointwise lets its output share no memory with its inputs") {
    CHECK(contains(cpp,
                   "  const detail::ReadTensors read_views{self_, mat2_};\n"
                   "  detail::OutArg out_arg(out, specs[0], detail::OutArg::Kind::Out, "
                   "\"mm.out\", \"out\", read_views, detail::Aliasing::None);\n"));
  }
  SUBCASE("a structured op without outputs runs meta, then its kernel on self") {
    CHECK(contains(
        cpp,
        "Tensor& detail::method_copy_(Tensor& self, const Tensor& src, bool non_blocking) {\n"
        "  autograd::detail::check_not_recorded(\"copy_\", true, self, src);\n"
        "  Tensor self_ = self;\n"
        "  Tensor src_ = src;\n"
        "  meta::copy_(self_, src_, non_blocking);\n"
        "  detail::kernels::copy_(self, src_, non_blocking);\n"
        "  return self;\n}\n"));
  }
  SUBCASE("several outputs come back as a tuple") {
    CHECK(contains(cpp, "  return std::tuple<Tensor, Tensor>(max, max_values);\n"));
    CHECK(contains(cpp, "  return std::tuple<Tensor&, Tensor&>(max, max_values);\n"));
  }
  SUBCASE("optional and list tensors are copied too") {
    CHECK(contains(cpp, "  std::optional<Tensor> weight_ = weight;\n"));
    CHECK(contains(cpp, "  std::vector<Tensor> tensors_ = tensors;\n"));
  }
  SUBCASE("a functional op without a derivatives entry refuses inputs that need a gradient") {
    CHECK(contains(cpp,
                   "Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, "
                   "const Scalar& threshold) {\n"
                   "  if (autograd::detail::needs_recording(grad_output, self)) [[unlikely]]\n"
                   "    autograd::detail::refuse_no_formula(\"threshold_backward\");\n"
                   "  Tensor grad_output_ = grad_output;\n"));
  }
  SUBCASE("an op whose outputs have no gradient runs as it is") {
    CHECK(contains(cpp,
                   "Tensor eq(const Tensor& self, const Tensor& other) {\n"
                   "  Tensor self_ = self;\n"));
  }
  SUBCASE("only the inputs with a formula decide recording") {
    CHECK(contains(cpp,
                   "  if (autograd::detail::needs_recording(self, other)) [[unlikely]]\n"
                   "    return autograd::generated::where_self(condition, self, other);\n"));
  }
  SUBCASE("a composite's public function only calls its bp::composite function") {
    CHECK(contains(cpp,
                   "\n// matmul(Tensor self, Tensor other) -> Tensor\n"
                   "Tensor matmul(const Tensor& self, const Tensor& other) {\n"
                   "  return composite::matmul(self, other);\n}\n"));
    CHECK(contains(cpp,
                   "\nTensor& detail::method_add__Scalar(Tensor& self, const Scalar& other, "
                   "const Scalar& alpha) {\n"
                   "  return composite::add__Scalar(self, other, alpha);\n}\n"));
    CHECK(contains(cpp,
                   "\nTensor& eq_out(Tensor& out, const Tensor& self, const Scalar& other) {\n"
                   "  return composite::eq_Scalar_out(out, self, other);\n}\n"));
  }
}

TEST_CASE("kernel_dtypes.h: per kernel op, its name, the declared argument and its dtypes") {
  const std::string h = generate_kernel_dtypes_h(ops());
  CHECK(contains(h, "namespace bp::plugin::kernel_dtypes {\n"));
  CHECK(contains(h,
                 "\n// sub.out takes every dtype but Bool in `out`.\n"
                 "struct sub_out {\n"
                 "  static constexpr std::string_view op = \"sub.out\";\n"
                 "  static constexpr std::string_view argument = \"out\";\n"
                 "  static constexpr DTypeSet dtypes = kAllButBoolDTypeSet;\n"
                 "};\n"));
  CHECK(contains(h,
                 "struct eq_Tensor_out {\n"
                 "  static constexpr std::string_view op = \"eq.Tensor_out\";\n"
                 "  static constexpr std::string_view argument = \"self\";\n"
                 "  static constexpr DTypeSet dtypes = kAllDTypeSet;\n"));
  CHECK(contains(h, "struct gelu_out {\n"));
  CHECK(contains(h, "  static constexpr DTypeSet dtypes = kFloatingDTypeSet;\n"));
  size_t structs = 0;
  for (size_t at = h.find("\nstruct "); at != std::string::npos; at = h.find("\nstruct ", at + 1))
    ++structs;
  CHECK(structs == ops().kernel_ops().size());
}

TEST_CASE("OpTable.h: one id per structured op in order, with names, schemas and hashes") {
  const std::string h = generate_op_table_h(ops());
  CHECK(contains(h, "enum class OpId : uint16_t {\n  add_out = 0,\n  sub_out = 1,\n"));
  CHECK(contains(h, "inline constexpr size_t kOpCount = 63;\n"));
  CHECK(contains(
      h,
      "inline constexpr std::array<std::string_view, kOpCount> kOpNames = {\n    \"add.out\",\n"));
  const std::string add_out =
      "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)";
  CHECK(contains(h, "    \"" + add_out + "\",\n"));
  CHECK(
      contains(h, fmt::format("    0x{:016x}ull,  // add.out\n", bp_schema_hash(add_out.c_str()))));
  CHECK(contains(h,
                 "using add_out_kernel = bp_status (*)(const DLTensor*, const DLTensor*, "
                 "bp_scalar, DLTensor*);\n"));
  CHECK(contains(h,
                 "using sum_IntList_out_kernel = bp_status (*)(const DLTensor*, bp_int_list, "
                 "uint8_t, int32_t, DLTensor*);\n"));
  CHECK(contains(h,
                 "using argmax_out_kernel = bp_status (*)(const DLTensor*, bp_optional_int, "
                 "uint8_t, DLTensor*);\n"));
  CHECK(contains(h,
                 "using rms_norm_out_kernel = bp_status (*)(const DLTensor*, bp_int_list, const "
                 "DLTensor*, bp_optional_float, DLTensor*);\n"));
  CHECK(contains(h, "using cat_out_kernel = bp_status (*)(bp_tensor_list, int64_t, DLTensor*);\n"));
  CHECK(contains(
      h, "using gelu_out_kernel = bp_status (*)(const DLTensor*, const char*, DLTensor*);\n"));
  CHECK(contains(h, "using copy__kernel = bp_status (*)(DLTensor*, const DLTensor*, uint8_t);\n"));
}

TEST_CASE("MetaFunctions.h: one declaration per meta name, shared by its users") {
  const std::string h = generate_meta_functions_h(ops());
  CHECK(contains(h,
                 "\nstd::array<OutputSpec, 1> binary_with_alpha(Tensor& self, Tensor& other, const "
                 "Scalar& alpha);\n"));
  CHECK(contains(h,
                 "\n// mul.out, maximum.out, minimum.out\nstd::array<OutputSpec, 1> binary(Tensor& "
                 "self, Tensor& other);\n"));
  CHECK(contains(
      h, "\nstd::array<OutputSpec, 2> max_dim_max(Tensor& self, int64_t dim, bool keepdim);\n"));
  CHECK(contains(h,
                 "\nstd::array<OutputSpec, 3> native_layer_norm_out(Tensor& input, IntArrayRef "
                 "normalized_shape, std::optional<Tensor>& weight, std::optional<Tensor>& bias, "
                 "double eps);\n"));
  CHECK(contains(h, "\nvoid copy_(Tensor& self, Tensor& src, bool non_blocking);\n"));
  CHECK(contains(
      h, "\nstd::array<OutputSpec, 1> cat_out(std::vector<Tensor>& tensors, int64_t dim);\n"));
  size_t binary_count = 0;
  for (size_t pos = h.find(" binary(Tensor&"); pos != std::string::npos;
       pos = h.find(" binary(Tensor&", pos + 1))
    ++binary_count;
  CHECK(binary_count == 1);
}

TEST_CASE("CompositeFunctions.h: each composite by its cpp name, with its public parameters") {
  const std::string h = generate_composite_functions_h(ops());
  CHECK(contains(h, "namespace bp::composite {\n"));
  CHECK(contains(h,
                 "\n// add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n"
                 "Tensor add_Scalar(const Tensor& self, const Scalar& other, const Scalar& "
                 "alpha);\n"));
  CHECK(contains(
      h, "\nTensor& add__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha);\n"));
  CHECK(contains(h,
                 "\nTensor& eq_Scalar_out(Tensor& out, const Tensor& self, const Scalar& "
                 "other);\n"));
  CHECK_FALSE(contains(h, " add_out("));  // structured ops are not composites
}

TEST_CASE("Kernels: the device is the first written tensor's, and arguments become ABI values") {
  const std::string cpp = generate_kernels_h(ops());
  // Read tensors go by their TensorImpl's view; a written one by a copy the kernel may change.
  // The written tensor's storage counts the write (autograd's version counter). The whole call
  // is one traced op (BACKPLANE_TRACE). BACKPLANE_VALIDATE gets the call with the written and the
  // read tensors by name, and the same call on host copies to compare with. Without a kernel
  // (BACKPLANE_FALLBACK=cpu), the same call on host copies: read tensors as inputs, written ones
  // as outputs that are copied back.
  CHECK(contains(cpp,
                 "\ninline void add_out(const Tensor& self, const Tensor& other, const Scalar& "
                 "alpha, const Tensor& out) {\n"
                 "  const Device device = out.device();\n"
                 "  const OpTraceScope trace(OpId::add_out, device);\n"
                 "  bp_kernel_fn kernel = kernel_in_table(OpId::add_out, device);\n"
                 "  if (kernel == nullptr) [[unlikely]] {\n"
                 "    kernel = kernel_lookup_slow(OpId::add_out, device);\n"
                 "    if (kernel == nullptr) return add_out_on_host(self, other, alpha, out, "
                 "device);\n"
                 "  }\n"
                 "  auto fn = kernel_as<add_out_kernel>(kernel);\n"
                 "  DLTensor out_dl = to_dlpack_view(out);\n"
                 "  out.impl()->storage()->bump_version();\n"
                 "  if (g_validating.load(std::memory_order_relaxed)) [[unlikely]] {\n"
                 "    const auto call = [&] { check_kernel_status(fn(to_dlpack_input(self), "
                 "to_dlpack_input(other), to_abi(alpha), &out_dl), OpId::add_out, device); };\n"
                 "    const auto on_host = [&](HostReference& host) { add_out_on_host(self, other, "
                 "alpha, out, host); };\n"
                 "    return validate_kernel_call(OpId::add_out, device, {{\"out\", out}}, "
                 "{{\"self\", self}, {\"other\", other}}, KernelCall(call), "
                 "HostCall(on_host));\n"
                 "  }\n"
                 "  check_kernel_status(fn(to_dlpack_input(self), to_dlpack_input(other), "
                 "to_abi(alpha), &out_dl), OpId::add_out, device);\n"
                 "}\n"));
  CHECK(contains(cpp,
                 "  const Device device = self.device();\n"
                 "  const OpTraceScope trace(OpId::copy_, device);\n"
                 "  bp_kernel_fn kernel = kernel_in_table(OpId::copy_, device);\n"));
  CHECK(contains(cpp,
                 "\n[[gnu::cold, gnu::noinline]] inline void add_out_on_host(const Tensor& self, "
                 "const Tensor& other, const Scalar& alpha, const Tensor& out, Device device) {\n"
                 "  HostFallback host(OpId::add_out, device);\n"
                 "  add_out(host.input(self), host.input(other), alpha, host.output(out));\n"
                 "  host.finish();\n"
                 "}\n"));
  CHECK(contains(cpp,
                 "\n[[gnu::cold, gnu::noinline]] inline void add_out_on_host(const Tensor& self, "
                 "const Tensor& other, const Scalar& alpha, const Tensor& out, HostReference& "
                 "host) {\n"
                 "  add_out(host.input(self), host.input(other), alpha, host.output(out));\n"
                 "}\n"));
  CHECK(contains(cpp, "  const Device device = max.device();\n"));
  CHECK(contains(cpp, "  const DLTensorList tensors_dl(tensors);\n"));
  CHECK(contains(cpp,
                 "validate_kernel_call(OpId::cat_out, device, {{\"out\", out}}, "
                 "{{\"tensors\", tensors}}, KernelCall(call), HostCall(on_host));\n"));
  CHECK(contains(cpp,
                 "validate_kernel_call(OpId::arange_start_out, device, {{\"out\", out}}, "
                 "{}, KernelCall(call), HostCall(on_host));\n"));
  CHECK(contains(cpp, "  const OptionalDLTensor weight_dl(weight);\n"));
  CHECK(contains(cpp, "  const std::string approximate_str = to_abi(approximate);\n"));
  CHECK(contains(cpp, "fn(to_dlpack_input(self), approximate_str.c_str(), &out_dl)"));
  CHECK(contains(
      cpp, "fn(to_dlpack_input(self), to_abi(dim), to_abi(keepdim), to_abi(dtype), &out_dl)"));
}

TEST_CASE("Kernels: an op refuses undeclared dtypes of its declared argument first") {
  const std::string cpp = generate_kernels_h(ops());
  CHECK(contains(cpp,
                 "\ninline void sub_out(const Tensor& self, const Tensor& other, const Scalar& "
                 "alpha, const Tensor& out) {\n"
                 "  check_kernel_dtype<plugin::kernel_dtypes::sub_out>(out);\n"
                 "  const Device device = out.device();\n"));
  // An op that takes every dtype has no check on its path (add.out above); every other has one.
  for (const NativeFunction* op : ops().kernel_ops()) {
    CAPTURE(op->func.name.str());
    const bool checked =
        contains(cpp, fmt::format("  check_kernel_dtype<plugin::kernel_dtypes::{}>({});\n",
                                  op->func.name.cpp_name(), op->dtypes_of));
    CHECK(checked == (op->dtypes != DTypeClass::All));
  }
}
