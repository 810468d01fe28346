#include "validation.h"

#include <fmt/format.h>

#include <cctype>
#include <map>

#include "cpp_types.h"
#include "spelling.h"

namespace bp::codegen {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string argument_types(const std::vector<const Argument*>& arguments) {
  std::string s = "(";
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i > 0) s += ", ";
    s += arguments[i]->type.str();
  }
  return s + ")";
}

std::vector<const Argument*> written_positional_arguments(const FunctionSchema& schema) {
  std::vector<const Argument*> result;
  for (const Argument& a : schema.arguments) {
    if (a.is_write() && !a.kwarg_only) result.push_back(&a);
  }
  return result;
}

void check_kind(const NativeFunction& f) {
  const int kinds = int(f.structured) + int(f.is_structured_delegate()) + int(f.composite);
  if (kinds != 1) {
    throw CodegenError(f.location, fmt::format("'{}' must be exactly one of 'structured: true', "
                                               "'structured_delegate: <op>' or 'composite: true'",
                                               f.func.name.str()));
  }
  if (!f.meta.empty() && !f.structured) {
    throw CodegenError(f.meta_location, "'meta' applies only to entries with 'structured: true'");
  }
  if (f.pointwise && !f.structured) {
    throw CodegenError(f.pointwise_location,
                       "'pointwise' applies only to entries with 'structured: true' (their "
                       "delegates and in-place overloads take it from there)");
  }
  if (f.dtypes && !f.structured) {
    throw CodegenError(f.dtypes_location,
                       "'dtypes' applies only to entries with 'structured: true' (it states what "
                       "their kernel takes; delegates and composites have no kernel)");
  }
  if (!f.dtypes_of.empty() && !f.structured) {
    throw CodegenError(f.dtypes_of_location,
                       "'dtypes_of' applies only to entries with 'structured: true'");
  }
  if (!f.variants.function && !f.variants.method) {
    throw CodegenError(f.location, "an entry needs at least one variant");
  }
}

void check_method_receiver(const NativeFunction& f) {
  if (!f.variants.method) return;
  const Argument* self = f.func.find_argument("self");
  if (!self || !self->type.is_plain_tensor() || self->is_out()) {
    throw CodegenError(f.location,
                       fmt::format("'{}' has the 'method' variant but no Tensor argument named "
                                   "'self' to be the receiver",
                                   f.func.name.str()));
  }
}

void check_returns_alias_arguments(const NativeFunction& f) {
  for (const Return& r : f.func.returns) {
    if (!r.annotation) continue;
    bool found = false;
    for (const Argument& a : f.func.arguments) {
      found = found || (a.annotation && a.annotation->alias_set == r.annotation->alias_set &&
                        a.is_write() == r.is_write());
    }
    if (!found) {
      throw CodegenError(f.location, fmt::format("return '{}' of '{}' aliases no argument", r.str(),
                                                 f.func.name.str()));
    }
  }
}

// A structured op states the dtypes its kernel takes, and in which Tensor argument: `dtypes_of`,
// else the first written tensor, which it becomes here.
void check_dtypes(NativeFunction& f) {
  const std::string name = f.func.name.str();
  if (!f.dtypes) {
    throw CodegenError(f.location,
                       fmt::format("structured op '{}' has no 'dtypes': add 'dtypes: all', "
                                   "'dtypes: all_but_bool' or 'dtypes: floating', the dtypes its "
                                   "kernel computes on",
                                   name));
  }
  if (f.dtypes_of.empty()) {
    for (const Argument& a : f.func.arguments) {
      if (a.is_write()) {
        f.dtypes_of = a.name;
        return;
      }
    }
  }
  std::vector<std::string> tensors;
  for (const Argument& a : f.func.arguments) {
    if (a.type.is_plain_tensor()) tensors.push_back(a.name);
  }
  const Argument* named = f.func.find_argument(f.dtypes_of);
  if (!named) {
    throw CodegenError(f.dtypes_of_location,
                       fmt::format("dtypes_of '{}' names no argument of '{}' (its Tensor "
                                   "arguments: {}){}",
                                   f.dtypes_of, name, comma_list(tensors),
                                   did_you_mean(f.dtypes_of, tensors)));
  }
  if (!named->type.is_plain_tensor()) {
    throw CodegenError(f.dtypes_of_location,
                       fmt::format("dtypes_of '{}' names the argument '{} {}' of '{}'; it must "
                                   "name a Tensor argument: {}",
                                   f.dtypes_of, named->type.str(), named->name, name,
                                   comma_list(tensors)));
  }
}

void check_structured(NativeFunction& f) {
  if (f.meta.empty()) f.meta = f.func.name.cpp_name();
  if (!is_identifier(f.meta)) {
    throw CodegenError(f.meta_location,
                       fmt::format("meta name '{}' is not a C++ identifier", f.meta));
  }
  for (const Argument& a : f.func.arguments) {
    if (!has_abi_type(a.type)) {
      throw CodegenError(f.location,
                         fmt::format("structured op '{}' has argument '{} {}': kernels cannot "
                                     "take a {} (make the op composite instead)",
                                     f.func.name.str(), a.type.str(), a.name, a.type.str()));
    }
  }
  const auto outs = f.func.out_arguments();
  const auto written = written_positional_arguments(f.func);
  if (outs.empty() && written.empty()) {
    throw CodegenError(f.location,
                       fmt::format("structured op '{}' writes no tensor: it needs out= arguments "
                                   "(Tensor(a!) after '*') or a written 'Tensor(a!) self'",
                                   f.func.name.str()));
  }
  if (!outs.empty() && !written.empty()) {
    throw CodegenError(f.location,
                       fmt::format("structured op '{}' writes both out= arguments and '{}'; a "
                                   "kernel op writes one or the other",
                                   f.func.name.str(), written[0]->name));
  }
  check_dtypes(f);
}

void check_delegate(const NativeFunction& f, const NativeFunctions& all) {
  const std::string target_name = f.structured_delegate->str();
  const NativeFunction* target = all.find(*f.structured_delegate);
  if (!target) {
    std::vector<std::string> structured_names;
    for (const NativeFunction* s : all.kernel_ops()) structured_names.push_back(s->func.name.str());
    throw CodegenError(f.delegate_location,
                       fmt::format("structured_delegate '{}' names no op in this file{}",
                                   target_name, did_you_mean(target_name, structured_names)));
  }
  if (!target->structured) {
    throw CodegenError(f.delegate_location,
                       fmt::format("structured_delegate '{}' is not a structured op "
                                   "(it has no 'structured: true')",
                                   target_name));
  }
  const auto target_outs = target->func.out_arguments();
  if (target_outs.empty()) {
    throw CodegenError(f.delegate_location,
                       fmt::format("structured_delegate '{}' has no out= arguments to allocate "
                                   "or to bind to self",
                                   target_name));
  }
  if (f.func.is_out_fn()) {
    throw CodegenError(f.location,
                       fmt::format("'{}' has out= arguments; list it as the structured op itself "
                                   "rather than as a delegate",
                                   f.func.name.str()));
  }
  const auto target_inputs = target->func.non_out_arguments();
  const auto& inputs = f.func.arguments;
  auto mismatch = [&](const std::string& detail) {
    return CodegenError(f.location,
                        fmt::format("the arguments of '{}' do not match the non-out arguments of "
                                    "its structured op '{}': {}",
                                    f.func.name.str(), target_name, detail));
  };
  if (inputs.size() != target_inputs.size()) {
    throw mismatch(fmt::format("{} arguments here, {} there", inputs.size(), target_inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].name != target_inputs[i]->name || !(inputs[i].type == target_inputs[i]->type)) {
      throw mismatch(fmt::format("argument {} is '{} {}' here but '{} {}' there", i + 1,
                                 inputs[i].type.str(), inputs[i].name, target_inputs[i]->type.str(),
                                 target_inputs[i]->name));
    }
  }
  const auto written = written_positional_arguments(f.func);
  const size_t produced = written.empty() ? f.func.returns.size() : written.size();
  if (produced != target_outs.size()) {
    throw CodegenError(f.location,
                       fmt::format("'{}' {} {} tensor(s) but its structured op '{}' has {} out= "
                                   "argument(s)",
                                   f.func.name.str(), written.empty() ? "returns" : "writes",
                                   produced, target_name, target_outs.size()));
  }
}

void check_unique_names(const NativeFunctions& all) {
  std::map<std::string, const NativeFunction*> seen;
  for (const NativeFunction& f : all.functions) {
    auto [it, inserted] = seen.emplace(f.func.name.str(), &f);
    if (!inserted) {
      throw CodegenError(f.location, fmt::format("duplicate operator '{}' (first defined at "
                                                 "line {})",
                                                 f.func.name.str(), it->second->location.line));
    }
  }
}

void check_shared_meta(const NativeFunctions& all) {
  std::map<std::string, const NativeFunction*> first_user;
  for (const NativeFunction* f : all.kernel_ops()) {
    auto [it, inserted] = first_user.emplace(f->meta, f);
    if (inserted) continue;
    const NativeFunction* first = it->second;
    const auto these = f->func.non_out_arguments();
    const auto those = first->func.non_out_arguments();
    bool same = these.size() == those.size() &&
                f->func.out_arguments().size() == first->func.out_arguments().size();
    for (size_t i = 0; same && i < these.size(); ++i) {
      same = these[i]->type == those[i]->type && these[i]->is_write() == those[i]->is_write();
    }
    if (!same) {
      throw CodegenError(f->meta_location,
                         fmt::format("meta function '{}' is shared by '{}' {} with {} output(s) "
                                     "and '{}' {} with {} output(s); every user of a meta "
                                     "function must have the same argument types",
                                     f->meta, first->func.name.str(), argument_types(those),
                                     first->func.out_arguments().size(), f->func.name.str(),
                                     argument_types(these), f->func.out_arguments().size()));
    }
  }
}

}  // namespace

void validate_native_functions(NativeFunctions& functions) {
  check_unique_names(functions);
  for (NativeFunction& f : functions.functions) {
    check_kind(f);
    check_method_receiver(f);
    check_returns_alias_arguments(f);
    if (f.structured) check_structured(f);
  }
  for (const NativeFunction& f : functions.functions) {
    if (f.is_structured_delegate()) check_delegate(f, functions);
  }
  check_shared_meta(functions);
}

}  // namespace bp::codegen
