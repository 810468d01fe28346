// The public API: free functions, Tensor methods, and their definitions: those that run a
// structured op (meta step, output allocation or checking, kernel) and those that call a
// composite op's hand-written bp::composite function.
#include <fmt/format.h>

#include "cpp_types.h"
#include "embedded_templates.h"
#include "gen_autograd.h"
#include "gen_core.h"
#include "signatures.h"

namespace bp::codegen {

namespace {

// What a defined function does with the structured op's out= arguments.
enum class OutputHandling {
  Allocate,  // functional delegate: fresh outputs from the meta step's specs
  InPlace,   // in-place delegate: `self` (the written arguments) checked as the outputs
  Out,       // the out= overload itself: the given tensors checked as the outputs
  None,      // a structured op without out= arguments (copy_): it writes `self` directly
};

// The definition of a function that runs structured op `op` for entry `f` (`f` is `op` itself,
// or one of its delegates, whose arguments are `op`'s non-out arguments):
// Functions.cpp.definition.in.
TemplateValues structured_definition(const NativeFunction& f, const NativeFunction& op,
                                     const Derivatives& derivatives) {
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

  // The meta step may replace tensor arguments, so it works on copies; the kernel gets what
  // it leaves. A written input stays the caller's tensor: that is what the kernel writes.
  TemplateLines copies;
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

  const bool checks_outputs =
      handling == OutputHandling::Out || handling == OutputHandling::InPlace;
  TemplateLines read_views;
  if (checks_outputs && !outs.empty()) {
    read_views.push_back(
        fmt::format("const detail::ReadTensors read_views{{{}}};", comma_list(read_tensors)));
  }
  const char* aliasing = op.pointwise ? "detail::Aliasing::SameView" : "detail::Aliasing::None";
  TemplateLines outputs;
  TemplateLines finishes;
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string& out = outs[i]->name;
    switch (handling) {
      case OutputHandling::Allocate:
        outputs.push_back(fmt::format("Tensor {} = detail::allocate_output(specs[{}]);", out, i));
        kernel_arguments.push_back(out);
        break;
      case OutputHandling::InPlace:
        outputs.push_back(fmt::format(
            "detail::OutArg {}_arg({}, specs[{}], detail::OutArg::Kind::InPlace, \"{}\", "
            "\"{}\", read_views, {});",
            out, written_inputs[i]->name, i, f.func.name.str(), written_inputs[i]->name, aliasing));
        kernel_arguments.push_back(out + "_arg.target()");
        finishes.push_back(out + "_arg.finish();");
        break;
      case OutputHandling::Out:
        outputs.push_back(fmt::format(
            "detail::OutArg {0}_arg({0}, specs[{1}], detail::OutArg::Kind::Out, \"{2}\", "
            "\"{0}\", read_views, {3});",
            out, i, op.func.name.str(), aliasing));
        kernel_arguments.push_back(out + "_arg.target()");
        finishes.push_back(out + "_arg.finish();");
        break;
      case OutputHandling::None: break;
    }
  }

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
  TemplateLines return_statement;
  if (returned.size() == 1) {
    return_statement.push_back(fmt::format("return {};", returned[0]));
  } else if (returned.size() > 1) {
    return_statement.push_back(
        fmt::format("return {}({});", public_return_type(f.func), comma_list(returned)));
  }

  const CppSignature sig = function_signature(f);
  return {
      {"schema", f.func.str()},
      {"return_type", sig.return_type},
      {"name", has_detail_method_function(f) ? "detail::" + sig.name : sig.name},
      {"parameters", sig.parameter_list(false)},
      {"autograd", autograd_prologue(f, derivatives)},
      {"argument_copies", copies},
      {"specs", outs.empty() ? "" : "auto specs = "},
      {"meta", op.meta},
      {"meta_arguments", comma_list(meta_arguments)},
      {"read_views", read_views},
      {"outputs", outputs},
      {"kernel", op.func.name.cpp_name()},
      {"kernel_arguments", comma_list(kernel_arguments)},
      {"output_finishes", finishes},
      {"return_statement", return_statement},
  };
}

// The public function of composite op `f`, which calls composite::<cpp name>
// (Functions.cpp.composite.in).
TemplateValues composite_definition(const NativeFunction& f, const Derivatives& derivatives) {
  const CppSignature sig = function_signature(f);
  return {
      {"schema", f.func.str()},
      {"return_type", sig.return_type},
      {"name", has_detail_method_function(f) ? "detail::" + sig.name : sig.name},
      {"parameters", sig.parameter_list(false)},
      {"autograd", autograd_prologue(f, derivatives)},
      {"cpp_name", f.func.name.cpp_name()},
      {"arguments", sig.argument_list()},
  };
}

// A free function's declaration (Functions.h.declaration.in); the detail ones, which only
// Tensor methods call, take no defaults.
std::string function_declaration(const NativeFunction& f, bool with_defaults) {
  const CppSignature sig = function_signature(f);
  return fill_template("Functions.h.declaration.in",
                       {
                           {"schema", f.func.str()},
                           {"return_type", sig.return_type},
                           {"name", sig.name},
                           {"parameters", sig.parameter_list(with_defaults)},
                       });
}

// A Tensor method calling its free function (TensorMethodsInline.h.method.in).
TemplateValues method_definition(const NativeFunction& f) {
  const CppSignature sig = method_signature(f);
  const std::string callee = has_detail_method_function(f)
                                 ? "bp::detail::" + detail_method_function_name(f)
                                 : "bp::" + public_function_name(f);
  return {
      {"return_type", sig.return_type},
      {"name", sig.name},
      {"parameters", sig.parameter_list(false)},
      {"const", sig.is_const ? " const" : ""},
      {"callee", callee},
      {"arguments", method_call_arguments(f)},
  };
}

}  // namespace

std::string generate_functions_h(const NativeFunctions& functions) {
  TemplateLines public_functions;
  TemplateLines method_functions;
  for (const NativeFunction& f : functions.functions) {
    if (has_detail_method_function(f)) {
      method_functions.push_back(function_declaration(f, false));
    } else {
      public_functions.push_back(function_declaration(f, true));
    }
  }
  return fill_template("Functions.h.in", {
                                             {"source", source_file_name(functions.path)},
                                             {"public_functions", public_functions},
                                             {"method_functions", method_functions},
                                         });
}

std::string generate_tensor_methods_inc(const NativeFunctions& functions) {
  TemplateLines methods;
  for (const NativeFunction& f : functions.functions) {
    if (!f.variants.method) continue;
    const CppSignature sig = method_signature(f);
    methods.push_back(fmt::format("{} {}({}){};", sig.return_type, sig.name,
                                  sig.parameter_list(true), sig.is_const ? " const" : ""));
  }
  return fill_template("TensorMethods.inc.in", {
                                                   {"source", source_file_name(functions.path)},
                                                   {"methods", methods},
                                               });
}

std::string generate_tensor_methods_inline_h(const NativeFunctions& functions) {
  TemplateLines methods;
  for (const NativeFunction& f : functions.functions) {
    if (f.variants.method)
      methods.push_back(fill_template("TensorMethodsInline.h.method.in", method_definition(f)));
  }
  return fill_template("TensorMethodsInline.h.in", {
                                                       {"source", source_file_name(functions.path)},
                                                       {"methods", methods},
                                                   });
}

std::string generate_functions_cpp(const NativeFunctions& functions,
                                   const Derivatives& derivatives) {
  TemplateLines definitions;
  for (const NativeFunction& f : functions.functions) {
    if (f.composite) {
      definitions.push_back(
          fill_template("Functions.cpp.composite.in", composite_definition(f, derivatives)));
      continue;
    }
    const NativeFunction& op = f.structured ? f : *functions.find(*f.structured_delegate);
    definitions.push_back(
        fill_template("Functions.cpp.definition.in", structured_definition(f, op, derivatives)));
  }
  return fill_template("Functions.cpp.in", {
                                               {"source", source_file_name(functions.path)},
                                               {"definitions", definitions},
                                           });
}

std::string generate_composite_functions_h(const NativeFunctions& functions) {
  TemplateLines declarations;
  for (const NativeFunction& f : functions.functions) {
    if (!f.composite) continue;
    const CppSignature sig = function_signature(f);
    declarations.push_back(fill_template("CompositeFunctions.h.declaration.in",
                                         {
                                             {"schema", f.func.str()},
                                             {"return_type", sig.return_type},
                                             {"name", f.func.name.cpp_name()},
                                             {"parameters", sig.parameter_list(false)},
                                         }));
  }
  return fill_template("CompositeFunctions.h.in", {
                                                      {"source", source_file_name(functions.path)},
                                                      {"composite_functions", declarations},
                                                  });
}

}  // namespace bp::codegen
