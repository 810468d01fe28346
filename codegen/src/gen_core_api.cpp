// The public API: free functions, Tensor methods, and the definitions that run a structured
// op (meta step, output allocation or checking, kernel).
#include <fmt/format.h>

#include "cpp_types.h"
#include "gen_core.h"
#include "signatures.h"

namespace bp::codegen {

namespace {

constexpr const char* kPublicIncludes = R"(#include <backplane/array_ref.h>
#include <backplane/device.h>
#include <backplane/sdk/dtype.hpp>
#include <backplane/sdk/scalar.hpp>
#include <backplane/tensor.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>
)";

// What a defined function does with the structured op's out= arguments.
enum class OutputHandling {
  Allocate,  // functional delegate: fresh outputs from the meta step's specs
  InPlace,   // in-place delegate: `self` (the written arguments) checked as the outputs
  Out,       // the out= overload itself: the given tensors checked as the outputs
  None,      // a structured op without out= arguments (copy_): it writes `self` directly
};

// The body of a function that runs structured op `op` for entry `f` (`f` is `op` itself, or
// one of its delegates, whose arguments are `op`'s non-out arguments).
std::string structured_body(const NativeFunction& f, const NativeFunction& op) {
  const auto inputs = op.func.non_out_arguments();
  const auto outs = op.func.out_arguments();
  std::vector<const Argument*> written_inputs;  // f's written positional arguments
  for (const Argument& a : f.func.arguments) {
    if (a.is_write() && !a.kwarg_only) written_inputs.push_back(&a);
  }
  OutputHandling handling = OutputHandling::Out;
  if (&f != &op) {
    handling = written_inputs.empty() ? OutputHandling::Allocate : OutputHandling::InPlace;
  } else if (outs.empty()) {
    handling = OutputHandling::None;
  }

  std::string s;
  // The meta step may replace tensor arguments, so it works on copies; the kernel gets what
  // it leaves. A written input stays the caller's tensor: that is what the kernel writes.
  std::vector<std::string> copies;
  std::vector<std::string> meta_arguments;
  std::vector<std::string> kernel_arguments;
  std::vector<std::string> read_tensors;  // what an output must not overlap but as the op allows
  for (const Argument* a : inputs) {
    if (is_tensor_category(classify(a->type))) {
      copies.push_back(fmt::format("{} {}_ = {};", tensor_local_type(*a), a->name, a->name));
      read_tensors.push_back(a->name + "_");
      meta_arguments.push_back(a->name + "_");
      kernel_arguments.push_back(handling == OutputHandling::None && a->is_write() ? a->name
                                                                                   : a->name + "_");
    } else {
      meta_arguments.push_back(a->name);
      kernel_arguments.push_back(a->name);
    }
  }
  for (const std::string& c : copies)
    s += "  " + c + "\n";
  s += fmt::format("  {}meta::{}({});\n", outs.empty() ? "" : "auto specs = ", op.meta,
                   comma_list(meta_arguments));

  const bool checks_outputs = handling == OutputHandling::Out || handling == OutputHandling::InPlace;
  if (checks_outputs && !outs.empty()) {
    s += fmt::format("  const detail::ReadTensors read_views{{{}}};\n", comma_list(read_tensors));
  }
  const char* aliasing = op.pointwise ? "detail::Aliasing::SameView" : "detail::Aliasing::None";
  std::vector<std::string> finishes;
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string& out = outs[i]->name;
    switch (handling) {
      case OutputHandling::Allocate:
        s += fmt::format("  Tensor {} = detail::allocate_output(specs[{}]);\n", out, i);
        kernel_arguments.push_back(out);
        break;
      case OutputHandling::InPlace:
        s += fmt::format(
            "  detail::OutArg {}_arg({}, specs[{}], detail::OutArg::Kind::InPlace, \"{}\", "
            "\"{}\", read_views, {});\n",
            out, written_inputs[i]->name, i, f.func.name.str(), written_inputs[i]->name, aliasing);
        kernel_arguments.push_back(out + "_arg.target()");
        finishes.push_back(out + "_arg.finish();");
        break;
      case OutputHandling::Out:
        s += fmt::format(
            "  detail::OutArg {0}_arg({0}, specs[{1}], detail::OutArg::Kind::Out, \"{2}\", "
            "\"{0}\", read_views, {3});\n",
            out, i, op.func.name.str(), aliasing);
        kernel_arguments.push_back(out + "_arg.target()");
        finishes.push_back(out + "_arg.finish();");
        break;
      case OutputHandling::None:
        break;
    }
  }
  s += fmt::format("  detail::kernels::{}({});\n", op.func.name.cpp_name(),
                   comma_list(kernel_arguments));
  for (const std::string& finish : finishes)
    s += "  " + finish + "\n";

  // Returns: an aliased return is the argument of its alias set; the others are the
  // allocated outputs in order.
  std::vector<std::string> returned;
  size_t next_output = 0;
  for (const Return& r : f.func.returns) {
    if (r.annotation) {
      for (const Argument& a : f.func.arguments) {
        if (a.annotation && a.annotation->alias_set == r.annotation->alias_set) {
          returned.push_back(a.name);
          break;
        }
      }
    } else {
      returned.push_back(outs.at(next_output++)->name);
    }
  }
  if (returned.size() == 1) {
    s += fmt::format("  return {};\n", returned[0]);
  } else if (returned.size() > 1) {
    s += fmt::format("  return {}({});\n", public_return_type(f.func), comma_list(returned));
  }
  return s;
}

std::string schema_comment(const NativeFunction& f) {
  return fmt::format("// {}\n", f.func.str());
}

}  // namespace

std::string generate_functions_h(const NativeFunctions& functions) {
  std::string s = generated_file_banner(functions.path, "the public free functions");
  s += "#pragma once\n\n";
  s += kPublicIncludes;
  s += R"(
// Operators as free functions, with PyTorch's names and argument order. Out= overloads are
// named <op>_out and take their outputs first: bp::add_out(out, self, other).
namespace bp {
)";
  for (const NativeFunction& f : functions.functions) {
    if (has_detail_method_function(f)) continue;
    const CppSignature sig = function_signature(f);
    s += fmt::format("\n{}{} {}({});\n", schema_comment(f), sig.return_type, sig.name,
                     sig.parameter_list(true));
  }
  s += R"(
// Overloads that are only Tensor methods (Tensor::add_): the methods call these.
namespace detail {
)";
  for (const NativeFunction& f : functions.functions) {
    if (!has_detail_method_function(f)) continue;
    const CppSignature sig = function_signature(f);
    s += fmt::format("\n{}{} {}({});\n", schema_comment(f), sig.return_type, sig.name,
                     sig.parameter_list(false));
  }
  s += "\n}  // namespace detail\n}  // namespace bp\n";
  return s;
}

std::string generate_tensor_methods_inc(const NativeFunctions& functions) {
  std::string s =
      generated_file_banner(functions.path, "Tensor methods, included inside class Tensor");
  for (const NativeFunction& f : functions.functions) {
    if (!f.variants.method) continue;
    const CppSignature sig = method_signature(f);
    s += fmt::format("{} {}({}){};\n", sig.return_type, sig.name, sig.parameter_list(true),
                     sig.is_const ? " const" : "");
  }
  return s;
}

std::string generate_tensor_methods_inline_h(const NativeFunctions& functions) {
  std::string s = generated_file_banner(functions.path, "Tensor methods' definitions");
  s += R"(#pragma once

#include <backplane/generated/Functions.h>
#include <backplane/tensor.h>

namespace bp {
)";
  for (const NativeFunction& f : functions.functions) {
    if (!f.variants.method) continue;
    const CppSignature sig = method_signature(f);
    const std::string callee = has_detail_method_function(f)
                                   ? "bp::detail::" + detail_method_function_name(f)
                                   : "bp::" + public_function_name(f);
    s += fmt::format("\ninline {} Tensor::{}({}){} {{\n  return {}({});\n}}\n", sig.return_type,
                     sig.name, sig.parameter_list(false), sig.is_const ? " const" : "", callee,
                     method_call_arguments(f));
  }
  s += "\n}  // namespace bp\n";
  return s;
}

std::string generate_functions_cpp(const NativeFunctions& functions) {
  std::string s = generated_file_banner(
      functions.path, "structured ops and their delegates (composites are in core/ops/composite/)");
  s += R"(#include <backplane/generated/Functions.h>
#include <core_generated/Kernels.h>
#include <core_generated/MetaFunctions.h>
#include <dispatch/out_arg.h>

#include <tuple>

namespace bp {
)";
  for (const NativeFunction& f : functions.functions) {
    if (f.composite) continue;
    const NativeFunction& op = f.structured ? f : *functions.find(*f.structured_delegate);
    const CppSignature sig = function_signature(f);
    const std::string name = has_detail_method_function(f) ? "detail::" + sig.name : sig.name;
    s += fmt::format("\n{}{} {}({}) {{\n{}}}\n", schema_comment(f), sig.return_type, name,
                     sig.parameter_list(false), structured_body(f, op));
  }
  s += "\n}  // namespace bp\n";
  return s;
}

}  // namespace bp::codegen
