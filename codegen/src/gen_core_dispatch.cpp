// The internal files that connect the public API to plugins: op ids and schema hashes, the
// meta function declarations, and the wrappers that call a kernel through the C ABI.
#include <fmt/format.h>

#include <map>

#include "cpp_types.h"
#include "gen_core.h"

namespace bp::codegen {

namespace {

// A C++ string literal for a schema (schemas contain no quotes or backslashes except inside
// string defaults, which use single quotes).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string kernel_wrapper_parameters(const FunctionSchema& schema) {
  std::vector<std::string> parameters;
  for (const Argument& a : schema.arguments) {
    parameters.push_back(kernel_wrapper_cpp_type(a) + " " + a.name);
  }
  return comma_list(parameters);
}

}  // namespace

std::string generate_op_table_h(const NativeFunctions& functions) {
  const auto ops = functions.kernel_ops();
  std::string s = generated_file_banner(functions.path, "op ids, schemas and kernel C types");
  s += R"(#pragma once

#include <backplane/abi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bp::detail {

// One id per kernel op (every `structured: true` entry), in ops.yaml order.
enum class OpId : uint16_t {
)";
  for (size_t i = 0; i < ops.size(); ++i) {
    s += fmt::format("  {} = {},\n", ops[i]->func.name.cpp_name(), i);
  }
  s += "};\n\n";
  s += fmt::format("inline constexpr size_t kOpCount = {};\n\n", ops.size());

  s += "// \"add.out\": the name plugins list and register kernels under.\n";
  s += "inline constexpr std::array<std::string_view, kOpCount> kOpNames = {\n";
  for (const NativeFunction* op : ops)
    s += fmt::format("    {},\n", quoted(op->func.name.str()));
  s += "};\n\n";

  s += "// The canonical schema strings.\n";
  s += "inline constexpr std::array<std::string_view, kOpCount> kOpSchemas = {\n";
  for (const NativeFunction* op : ops)
    s += fmt::format("    {},\n", quoted(op->func.str()));
  s += "};\n\n";

  s += "// bp_schema_hash() of each canonical schema: a kernel registered with another hash was\n";
  s += "// built from another schema and is refused.\n";
  s += "inline constexpr std::array<uint64_t, kOpCount> kOpSchemaHashes = {\n";
  for (const NativeFunction* op : ops) {
    s += fmt::format("    0x{:016x}ull,  // {}\n", op->func.hash(), op->func.name.str());
  }
  s += "};\n\n";

  s += "// Each kernel's C signature; the dispatch table stores them as bp_kernel_fn.\n";
  for (const NativeFunction* op : ops) {
    std::vector<std::string> types;
    for (const Argument& a : op->func.arguments)
      types.push_back(abi_c_type(a));
    s += fmt::format("using {}_kernel = bp_status (*)({});\n", op->func.name.cpp_name(),
                     comma_list(types));
  }
  s += "\n}  // namespace bp::detail\n";
  return s;
}

std::string generate_meta_functions_h(const NativeFunctions& functions) {
  std::string s = generated_file_banner(functions.path,
                                        "the meta functions, written by hand in core/ops/meta/");
  s += R"(#pragma once

#include <backplane/array_ref.h>
#include <backplane/device.h>
#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/scalar.hpp>
#include <backplane/tensor.h>
#include <dispatch/out_arg.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

// A meta function checks an op's arguments (a bp::Error on bad input) and returns the shape,
// dtype and device of each output. It may replace tensor arguments (with broadcast views or
// dtype-converted copies): the kernel sees what it leaves.
namespace bp::meta {
)";
  // One declaration per meta name, listing its users; validation made their types agree.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const NativeFunction*>> users;
  for (const NativeFunction* op : functions.kernel_ops()) {
    if (users[op->meta].empty()) order.push_back(op->meta);
    users[op->meta].push_back(op);
  }
  for (const std::string& meta : order) {
    const NativeFunction* first = users[meta].front();
    std::vector<std::string> names;
    for (const NativeFunction* op : users[meta])
      names.push_back(op->func.name.str());
    std::vector<std::string> parameters;
    for (const Argument* a : first->func.non_out_arguments()) {
      parameters.push_back(meta_cpp_type(*a) + " " + a->name);
    }
    const size_t outputs = first->func.out_arguments().size();
    const std::string return_type =
        outputs == 0 ? "void" : fmt::format("std::array<OutputSpec, {}>", outputs);
    s += fmt::format("\n// {}\n{} {}({});\n", comma_list(names), return_type, meta,
                     comma_list(parameters));
  }
  s += "\n}  // namespace bp::meta\n";
  return s;
}

std::string generate_kernels_h(const NativeFunctions& functions) {
  std::string s = generated_file_banner(functions.path, "calling kernels through the C ABI");
  s += R"(#pragma once

#include <backplane/array_ref.h>
#include <backplane/device.h>
#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/scalar.hpp>
#include <backplane/tensor.h>
#include <core_generated/OpTable.h>
#include <dispatch/dispatch.h>
#include <dispatch/dlpack_bridge.h>
#include <dispatch/host_fallback.h>
#include <dispatch/kernel_dtype_check.h>
#include <dispatch/op_trace.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// One function per kernel op, taking the schema's arguments in schema order (outputs as
// const Tensor&, already allocated). It refuses a dtype that the op does not take (ops.yaml's
// `dtypes:`), finds the kernel for the device of the first written tensor, calls it with
// DLPack views and throws a bp::Error when it fails. Where BACKPLANE_FALLBACK=cpu sends the op
// to the host (no kernel), it calls itself again on host copies and writes the results back.
// Inline: they are the last step of every op, and a call more would be most of what they cost.
namespace bp::detail::kernels {

// The table stores kernels type-erased; the schema hash vouched for the real signature when
// the kernel was registered. Casting through void (*)() tells the compiler the cast is meant.
template <typename Kernel>
Kernel kernel_as(bp_kernel_fn fn) {
  return reinterpret_cast<Kernel>(reinterpret_cast<void (*)()>(fn));
}
)";
  for (const NativeFunction* op : functions.kernel_ops()) {
    const std::string cpp_name = op->func.name.cpp_name();
    const Argument* device_source = nullptr;
    for (const Argument& a : op->func.arguments) {
      if (a.is_write() && !device_source) device_source = &a;
    }
    std::vector<std::string> conversions;  // locals that hold the ABI form of an argument
    std::vector<std::string> call_arguments;
    std::vector<std::string> fallback_arguments;  // the same call, on host copies
    for (const Argument& a : op->func.arguments) {
      switch (classify(a.type)) {
        case TypeCategory::Tensor:
        case TypeCategory::OptionalTensor:
        case TypeCategory::TensorList:
          fallback_arguments.push_back(
              fmt::format("fallback.{}({})", a.is_write() ? "output" : "input", a.name));
          break;
        default:
          fallback_arguments.push_back(a.name);
          break;
      }
      switch (classify(a.type)) {
        case TypeCategory::Tensor:
          // A kernel reads a tensor through the view its TensorImpl keeps; a written tensor
          // gets a copy of it, as its DLTensor* may be written through.
          if (a.is_write()) {
            conversions.push_back(fmt::format("DLTensor {0}_dl = to_dlpack_view({0});", a.name));
            call_arguments.push_back(fmt::format("&{}_dl", a.name));
          } else {
            call_arguments.push_back(fmt::format("to_dlpack_input({})", a.name));
          }
          break;
        case TypeCategory::OptionalTensor:
          conversions.push_back(fmt::format("const OptionalDLTensor {0}_dl({0});", a.name));
          call_arguments.push_back(fmt::format("{}_dl.get()", a.name));
          break;
        case TypeCategory::TensorList:
          conversions.push_back(fmt::format("const DLTensorList {0}_dl({0});", a.name));
          call_arguments.push_back(fmt::format("{}_dl.get()", a.name));
          break;
        case TypeCategory::Str:
          // The NUL-terminated copy must outlive the call.
          conversions.push_back(fmt::format("const std::string {0}_str = to_abi({0});", a.name));
          call_arguments.push_back(fmt::format("{}_str.c_str()", a.name));
          break;
        default:
          call_arguments.push_back(fmt::format("to_abi({})", a.name));
          break;
      }
    }
    std::vector<std::string> argument_names;
    for (const Argument& a : op->func.arguments) argument_names.push_back(a.name);
    const std::string parameters = kernel_wrapper_parameters(op->func);
    // The host's path is a function of its own, kept out of line, so that the kernel's path
    // stays as small as it was.
    s += fmt::format("\ninline void {}({});\n", cpp_name, parameters);
    s += fmt::format(
        "\n[[gnu::cold, gnu::noinline]] inline void {0}_on_host({1}, Device device) {{\n"
        "  HostFallback fallback(OpId::{0}, device);\n"
        "  {0}({2});\n"
        "  fallback.finish();\n"
        "}}\n",
        cpp_name, parameters, comma_list(fallback_arguments));
    s += fmt::format("\ninline void {}({}) {{\n", cpp_name, parameters);
    s += kernel_dtype_check(*op);
    s += fmt::format("  const Device device = {}.device();\n", device_source->name);
    s += fmt::format("  const OpTraceScope trace(OpId::{}, device);\n", cpp_name);
    // One test of the table's entry on the kernel's path, as before the fallback existed.
    s += fmt::format(
        "  bp_kernel_fn kernel = kernel_in_table(OpId::{0}, device);\n"
        "  if (kernel == nullptr) [[unlikely]] {{\n"
        "    kernel = kernel_lookup_slow(OpId::{0}, device);\n"
        "    if (kernel == nullptr) return {0}_on_host({1}, device);\n"
        "  }}\n",
        cpp_name, comma_list(argument_names));
    s += fmt::format("  auto fn = kernel_as<{}_kernel>(kernel);\n", cpp_name);
    for (const std::string& c : conversions)
      s += "  " + c + "\n";
    s += fmt::format("  check_kernel_status(fn({}), OpId::{}, device);\n}}\n",
                     comma_list(call_arguments), cpp_name);
  }
  s += "\n}  // namespace bp::detail::kernels\n";
  return s;
}

}  // namespace bp::codegen
