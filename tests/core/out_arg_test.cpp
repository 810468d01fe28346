// out= and in-place outputs: resizing empty outputs, shape errors, dtype casts through a
// temporary, strided outputs, and outputs that share memory with an input.
#include "core_test_support.h"

#include "dispatch/out_arg.h"

using namespace bp;
using coretest::check_invalid_argument;
using coretest::shape_of;
using Shape = std::vector<int64_t>;

TEST_CASE("an empty out= tensor is resized to the result's shape") {
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor out = empty({0});
  add_out(out, a, a);
  CHECK(shape_of(out) == Shape{2, 2});
  CHECK(out.to_vector<float>() == std::vector<float>{2, 4, 6, 8});
}

TEST_CASE("an out= tensor of another shape with elements is an error") {
  const Tensor a = ones({2, 2});
  Tensor out = empty({3});
  check_invalid_argument(
      [&] { add_out(out, a, a); },
      {"add.out: argument 'out' has shape [3], but the result has shape [2, 2]"});
}

TEST_CASE("an in-place op must not change self's shape") {
  Tensor row = ones({3});
  const Tensor matrix = ones({2, 3});
  check_invalid_argument([&] { row.add_(matrix); },
                         {"add_.Tensor", "the result has shape [2, 3]", "'self'", "has shape [3]"});
}

TEST_CASE("a castable result dtype is written through a temporary") {
  const Tensor ints = from_vector<int32_t>({1, 2, 3}, {3});
  Tensor out = empty({3}, kFloat64);
  add_out(out, ints, ints);
  CHECK(out.dtype() == kFloat64);
  CHECK(out.to_vector<double>() == std::vector<double>{2, 4, 6});

  Tensor floats = from_vector<float>({0.5f, 1.5f}, {2});
  floats.add_(from_vector<int64_t>({1, 1}, {2}));
  CHECK(floats.to_vector<float>() == std::vector<float>{1.5f, 2.5f});
}

TEST_CASE("a result dtype that cannot be cast to out's is an error") {
  const Tensor floats = ones({2});
  Tensor ints = zeros({2}, kInt64);
  check_invalid_argument([&] { add_out(ints, floats, floats); },
                         {"add.out: result type Float can't be cast to the desired output type "
                          "Long of argument 'out'"});
  check_invalid_argument([&] { ints.add_(floats); },
                         {"result type Float can't be cast", "Long", "'self'"});
  Tensor mask = zeros({2}, kBool);
  check_invalid_argument([&] { add_out(mask, floats, floats); },
                         {"can't be cast to the desired output type Bool"});
}

TEST_CASE("a strided out= tensor receives the result in place") {
  Tensor storage = zeros({2, 4});
  Tensor every_other = storage.slice(1, 0, 4, 2);
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  add_out(every_other, a, a);
  CHECK(storage.to_vector<float>() == std::vector<float>{2, 0, 4, 0, 6, 0, 8, 0});
  Tensor columns = zeros({2, 2}).transpose(0, 1);
  columns.add_(a);
  CHECK(columns.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("an out= tensor on another device is an error") {
  Tensor elsewhere = empty({2}).to(coretest::fixture_device());
  const Tensor a = ones({2});
  check_invalid_argument([&] { add_out(elsewhere, a, a); },
                         {"add.out: argument 'out' is on fixture:0", "computed on cpu"});
}

TEST_CASE("OutArg checks an undefined out= tensor") {
  Tensor undefined;
  const OutputSpec spec{{2}, kFloat32, Device::cpu()};
  check_invalid_argument(
      [&] {
        detail::OutArg(undefined, spec, detail::OutArg::Kind::Out, "add.out", "out",
                       detail::ReadTensors(), detail::Aliasing::SameView);
      },
      {"add.out: argument 'out' is an undefined tensor"});
}

// Results as if every input were read before any output element is written, whatever memory
// they share: an output that is an input exactly is written in place by pointwise ops; any
// other overlap, and any at all in other ops, goes through a temporary.
TEST_CASE("an output may be its pointwise op's input exactly: the kernel writes it in place") {
  Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 2});
  const void* before = x.data_ptr();
  add_out(x, x, x);
  CHECK(x.to_vector<float>() == std::vector<float>{2, 4, 6, 8});
  x.mul_(x);
  CHECK(x.to_vector<float>() == std::vector<float>{4, 16, 36, 64});
  CHECK(x.data_ptr() == before);
}

TEST_CASE("an output that partly overlaps an input gets the result of the inputs as they were") {
  Tensor x = arange(1, 7, 1, kFloat32);
  Tensor tail = x.slice(0, 1, 6);
  neg_out(tail, x.slice(0, 0, 5));  // out starts one element after its input
  CHECK(x.to_vector<float>() == std::vector<float>{1, -1, -2, -3, -4, -5});

  Tensor y = arange(1, 7, 1, kFloat32);
  y.slice(0, 1, 6).add_(y.slice(0, 0, 5));
  CHECK(y.to_vector<float>() == std::vector<float>{1, 3, 5, 7, 9, 11});

  Tensor rows = from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  rows.add_(rows.select(0, 0));  // row 0, broadcast, is read by every row
  CHECK(rows.to_vector<float>() == std::vector<float>{2, 4, 4, 6, 6, 8});

  Tensor square = arange(1, 17, 1, kFloat32).view({4, 4});
  const std::vector<float> original = square.to_vector<float>();
  square.add_(square.transpose(0, 1));
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      CHECK(square.to_vector<float>()[static_cast<size_t>(i * 4 + j)] ==
            original[static_cast<size_t>(i * 4 + j)] + original[static_cast<size_t>(j * 4 + i)]);
    }
  }
}

TEST_CASE(
    "an output that is an input of an op that is not pointwise gets the result of the inputs as "
    "they were") {
  Tensor a = ones({8, 8});
  mm_out(a, a, ones({8, 8}));
  CHECK(a.to_vector<float>() == std::vector<float>(64, 8.0f));

  Tensor x = from_vector<float>({1, 2, 3, 4}, {4});
  index_select_out(x, x, 0, from_vector<int64_t>({3, 2, 1, 0}, {4}));
  CHECK(x.to_vector<float>() == std::vector<float>{4, 3, 2, 1});

  Tensor y = from_vector<float>({1, 2, 3, 4}, {4});
  cat_out(y, {y.slice(0, 2, 4), y.slice(0, 0, 2)});
  CHECK(y.to_vector<float>() == std::vector<float>{3, 4, 1, 2});

  Tensor weight = from_vector<float>({1, 2, 3, 4}, {2, 2});
  embedding_out(weight, weight, from_vector<int64_t>({1, 0}, {2}));
  CHECK(weight.to_vector<float>() == std::vector<float>{3, 4, 1, 2});
}

// Tensors whose elements overlap with non-zero strides, as empty_strided and from_blob can lay
// them out, and views of them: a result written into one would be last-writer-wins.
TEST_CASE("an out= tensor whose elements overlap is an error naming it, its layout and the fix") {
  const Tensor a = ones({2, 2});
  Tensor overlapping = empty_strided({2, 2}, {1, 1});  // elements (0, 1) and (1, 0) share memory
  check_invalid_argument(
      [&] { add_out(overlapping, a, a); },
      {"add.out: argument 'out' (sizes [2, 2], strides [1, 1]) has elements that "
       "share memory, so it cannot hold a result",
       ".contiguous() copy"});
  check_invalid_argument([&] { mm_out(overlapping, a, a); },
                         {"mm.out: argument 'out' (sizes [2, 2], strides [1, 1]) has elements"});
  check_invalid_argument(
      [&] {
        sum_out(overlapping, ones({2, 2, 3}), {2});
      },
      {"sum.IntList_out: argument 'out'", "share memory"});
  // A view of it overlaps as well, in another order of dims.
  Tensor transposed = empty_strided({3, 4}, {1, 1}).transpose(0, 1);
  check_invalid_argument(
      [&] {
        neg_out(transposed, ones({4, 3}));
      },
      {"neg.out: argument 'out' (sizes [4, 3], strides [1, 1]) has elements"});
  // Host memory the caller lays out: element (i, j) at i + 2 * j, so (2, 0) is (0, 1).
  std::vector<float> buffer(16);
  Tensor strided_blob = from_blob(buffer.data(), {3, 3}, {1, 2}, kFloat32);
  check_invalid_argument(
      [&] {
        add_out(strided_blob, ones({3, 3}), ones({3, 3}));
      },
      {"argument 'out' (sizes [3, 3], strides [1, 2]) has elements that share "
       "memory"});
}

TEST_CASE("an in-place op on a tensor whose elements overlap is an error naming it") {
  Tensor overlapping = empty_strided({2, 2}, {1, 1});
  check_invalid_argument([&] { overlapping.add_(1); },
                         {"add_.Tensor: argument 'self' (sizes [2, 2], strides [1, 1]) has "
                          "elements that share memory"});
  check_invalid_argument([&] { overlapping.mul_(ones({2, 2})); }, {"mul_.Tensor: argument 'self'"});
  check_invalid_argument([&] { overlapping.relu_(); }, {"relu_: argument 'self'", "share memory"});
  check_invalid_argument(
      [&] {
        overlapping.addmm_(ones({2, 2}), ones({2, 2}));
      },
      {"addmm_: argument 'self' (sizes [2, 2], strides [1, 1]) has elements"});
}

TEST_CASE("an out= tensor whose strides interleave its dims without overlap receives the result") {
  // Offsets 2i + 3j for i, j < 3 are all distinct, though stride 3 does not exceed the reach of
  // stride 2 over three elements (4): the offsets are compared one by one.
  Tensor interleaved = empty_strided({3, 3}, {2, 3});
  add_out(interleaved, arange(0, 9, 1, kFloat32).view({3, 3}), ones({3, 3}));
  CHECK(interleaved.contiguous().to_vector<float>() ==
        std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  // A dim whose stride exceeds the reach of all the others keeps them apart as well.
  Tensor stacked = empty_strided({5, 3, 3}, {100, 2, 3});
  stacked.fill_(2);
  stacked.mul_(stacked);
  CHECK(stacked.contiguous().to_vector<float>() == std::vector<float>(45, 4));
}

TEST_CASE("a layout with too many elements to decide its overlap is refused as one that may") {
  // Offsets 2i + 3j for i < 3, j < 30000 do not repeat, but telling takes 90000 comparisons.
  Tensor undecided = empty_strided({3, 30000}, {2, 3});
  check_invalid_argument([&] { undecided.fill_(0); },
                         {"fill_: argument 'self' (sizes [3, 30000], strides [2, 3]) may have "
                          "elements that share memory",
                          "write to a contiguous tensor, such as a .contiguous() copy of it"});
}

TEST_CASE("an output that repeats its elements (an expanded view) is an error naming the op") {
  Tensor expanded = zeros({1, 3}).expand({2, 3});
  check_invalid_argument(
      [&] { expanded.add_(1); },
      {"add_.Tensor: argument 'self' repeats its elements along dim 0", ".clone()"});
  check_invalid_argument(
      [&] {
        sum_out(expanded, ones({2, 3, 4}), {2});
      },
      {"sum.IntList_out: argument 'out' repeats its elements along dim 0"});
}
