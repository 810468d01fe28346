// The internal files that connect the public API to plugins: op ids and schema hashes, the
// meta function declarations, and the wrappers that call a kernel through the C ABI.
#include <fmt/format.h>

#include <map>

#include "cpp_types.h"
#include "embedded_templates.h"
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

// A meta function and the ops that use it (MetaFunctions.h.declaration.in).
TemplateValues meta_declaration(const std::string& meta,
                                const std::vector<const NativeFunction*>& users) {
  // Validation made the users' types agree, so the first one speaks for all.
  const NativeFunction* first = users.front();
  std::vector<std::string> names;
  for (const NativeFunction* op : users) names.push_back(op->func.name.str());
  std::vector<std::string> parameters;
  for (const Argument* a : first->func.non_out_arguments()) {
    parameters.push_back(meta_cpp_type(*a) + " " + a->name);
  }
  const size_t outputs = first->func.out_arguments().size();
  return {
      {"ops", comma_list(names)},
      {"return_type", outputs == 0 ? "void" : fmt::format("std::array<OutputSpec, {}>", outputs)},
      {"meta", meta},
      {"parameters", comma_list(parameters)},
  };
}

// The wrapper that calls `op`'s kernel (Kernels.h.kernel.in). Its path through the host
// fallback is a function of its own, kept out of line, so that the kernel's path stays small.
TemplateValues kernel_wrapper(const NativeFunction& op) {
  const Argument* device_source = nullptr;
  for (const Argument& a : op.func.arguments) {
    if (a.is_write() && !device_source) device_source = &a;
  }
  TemplateLines conversions;  // locals that hold the ABI form of an argument
  TemplateLines version_bumps;
  std::vector<std::string> abi_arguments;
  std::vector<std::string> host_arguments;  // the same call, on host copies
  std::vector<std::string> argument_names;
  // BACKPLANE_VALIDATE's view of the call: the tensors the kernel writes and those it reads.
  std::vector<std::string> written_tensors;
  std::vector<std::string> read_tensors;
  for (const Argument& a : op.func.arguments) {
    argument_names.push_back(a.name);
    switch (classify(a.type)) {
      case TypeCategory::Tensor:
      case TypeCategory::OptionalTensor:
      case TypeCategory::TensorList:
        host_arguments.push_back(
            fmt::format("host.{}({})", a.is_write() ? "output" : "input", a.name));
        (a.is_write() ? written_tensors : read_tensors)
            .push_back(fmt::format("{{\"{0}\", {0}}}", a.name));
        break;
      default: host_arguments.push_back(a.name); break;
    }
    switch (classify(a.type)) {
      case TypeCategory::Tensor:
        // A kernel reads a tensor through the view its TensorImpl keeps; a written tensor
        // gets a copy of it, as its DLTensor* may be written through.
        if (a.is_write()) {
          conversions.push_back(fmt::format("DLTensor {0}_dl = to_dlpack_view({0});", a.name));
          version_bumps.push_back(fmt::format("{}.impl()->storage()->bump_version();", a.name));
          abi_arguments.push_back(fmt::format("&{}_dl", a.name));
        } else {
          abi_arguments.push_back(fmt::format("to_dlpack_input({})", a.name));
        }
        break;
      case TypeCategory::OptionalTensor:
        conversions.push_back(fmt::format("const OptionalDLTensor {0}_dl({0});", a.name));
        abi_arguments.push_back(fmt::format("{}_dl.get()", a.name));
        break;
      case TypeCategory::TensorList:
        conversions.push_back(fmt::format("const DLTensorList {0}_dl({0});", a.name));
        abi_arguments.push_back(fmt::format("{}_dl.get()", a.name));
        break;
      case TypeCategory::Str:
        // The NUL-terminated copy must outlive the call.
        conversions.push_back(fmt::format("const std::string {0}_str = to_abi({0});", a.name));
        abi_arguments.push_back(fmt::format("{}_str.c_str()", a.name));
        break;
      default: abi_arguments.push_back(fmt::format("to_abi({})", a.name)); break;
    }
  }
  return {
      {"cpp_name", op.func.name.cpp_name()},
      {"parameters", kernel_wrapper_parameters(op.func)},
      {"host_arguments", comma_list(host_arguments)},
      {"dtype_check", kernel_dtype_check(op)},
      {"device_tensor", device_source->name},
      {"arguments", comma_list(argument_names)},
      {"abi_conversions", conversions},
      {"version_bumps", version_bumps},
      {"abi_arguments", comma_list(abi_arguments)},
      {"written_tensors", comma_list(written_tensors)},
      {"read_tensors", comma_list(read_tensors)},
  };
}

}  // namespace

std::string generate_op_table_h(const NativeFunctions& functions) {
  const auto ops = functions.kernel_ops();
  TemplateLines ids;
  TemplateLines names;
  TemplateLines schemas;
  TemplateLines hashes;
  TemplateLines kernel_types;
  for (size_t i = 0; i < ops.size(); ++i) {
    const FunctionSchema& schema = ops[i]->func;
    ids.push_back(fmt::format("{} = {},", schema.name.cpp_name(), i));
    names.push_back(quoted(schema.name.str()) + ",");
    schemas.push_back(quoted(schema.str()) + ",");
    hashes.push_back(fmt::format("0x{:016x}ull,  // {}", schema.hash(), schema.name.str()));
    std::vector<std::string> types;
    for (const Argument& a : schema.arguments) types.push_back(abi_c_type(a));
    kernel_types.push_back(fmt::format("using {}_kernel = bp_status (*)({});",
                                       schema.name.cpp_name(), comma_list(types)));
  }
  return fill_template("OpTable.h.in", {
                                           {"source", source_file_name(functions.path)},
                                           {"op_ids", ids},
                                           {"op_count", std::to_string(ops.size())},
                                           {"op_names", names},
                                           {"op_schemas", schemas},
                                           {"op_schema_hashes", hashes},
                                           {"kernel_types", kernel_types},
                                       });
}

std::string generate_meta_functions_h(const NativeFunctions& functions) {
  // One declaration per meta name, listing its users.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const NativeFunction*>> users;
  for (const NativeFunction* op : functions.kernel_ops()) {
    if (users[op->meta].empty()) order.push_back(op->meta);
    users[op->meta].push_back(op);
  }
  TemplateLines declarations;
  for (const std::string& meta : order) {
    declarations.push_back(
        fill_template("MetaFunctions.h.declaration.in", meta_declaration(meta, users[meta])));
  }
  return fill_template("MetaFunctions.h.in", {
                                                 {"source", source_file_name(functions.path)},
                                                 {"meta_functions", declarations},
                                             });
}

std::string generate_kernels_h(const NativeFunctions& functions) {
  TemplateLines kernels;
  for (const NativeFunction* op : functions.kernel_ops())
    kernels.push_back(fill_template("Kernels.h.kernel.in", kernel_wrapper(*op)));
  return fill_template("Kernels.h.in", {
                                           {"source", source_file_name(functions.path)},
                                           {"kernels", kernels},
                                       });
}

}  // namespace bp::codegen
