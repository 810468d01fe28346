// The sample inputs of every kernel op, in the spirit of PyTorch's OpInfo: for each kernel op
// of ops.yaml, a generator that makes the op's cases for one dtype (edge shapes, broadcasting,
// the values that matter to it), from which the runner (runner.h) derives the layouts and forms
// it tries. bp-conformance and the project's op tests run the same generators.
#pragma once

#include <backplane/conformance/op_arguments.h>
#include <backplane/conformance/samples.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bp::conformance {

struct TensorSpec {
  Shape sizes;
  DType dtype = kFloat32;
};

// One case of an op: its arguments in schema order (the kernel's parameters, see
// kernel_op_table.h), with tensors on the host.
struct SampleInput {
  std::string description;  // "broadcast [3, 1] with [4]"
  OpArguments arguments;
  // The out= tensors to write, for an op without a functional overload to say what they are
  // (an empty shape with no elements is resized by the op); empty otherwise.
  std::vector<TensorSpec> outputs;
  // Whether the runner may also pass the tensor arguments as views (transposed, sliced,
  // expanded); false where the case depends on the exact values it was given.
  bool layouts = true;
};

struct OpInfo {
  std::string_view kernel_op;  // "add.out"
  // The cases for `dtype`, one of the dtypes the op declares; the generator may run host ops
  // (a backward op's saved values come from its forward op on the host).
  std::vector<SampleInput> (*samples)(DType dtype);
};

// One per kernel op of ops.yaml, in no particular order.
std::span<const OpInfo> op_infos();
const OpInfo* find_op_info(std::string_view kernel_op);

}  // namespace bp::conformance
