// Where the kernels' 16-byte vector accesses may start, checked on the host (vector_alignment.h
// compiles for both): the vector width of a set of operand types, whether a pointer is aligned for
// a vector, and how many elements a scalar head takes to reach the next aligned one.
#include "cuda_test_support.h"

#include "kernels/vector_alignment.h"

#include <cstdint>

namespace {

using bp::cuda::elements_to_vector_alignment;
using bp::cuda::is_vector_aligned;
using bp::cuda::kVectorWidth;

TEST_CASE("vector width: 16 bytes of the widest operand type") {
  CHECK(kVectorWidth<float> == 4);
  CHECK(kVectorWidth<uint16_t> == 8);
  CHECK(kVectorWidth<int8_t> == 16);
  CHECK(kVectorWidth<float, double> == 2);
  CHECK(kVectorWidth<bool, uint16_t, float> == 4);
}

TEST_CASE("a scalar head of elements reaches the next 16-byte boundary, whatever the offset") {
  alignas(16) static float floats[64];
  for (int offset = 0; offset < 32; ++offset) {
    const float* p = floats + offset;
    const int64_t head = elements_to_vector_alignment<4>(p);
    INFO("offset " << offset << " floats, head " << head);
    CHECK(head == (4 - offset % 4) % 4);
    CHECK(is_vector_aligned<4>(p + head));
    CHECK(is_vector_aligned<4>(p) == (head == 0));
  }
  alignas(16) static uint16_t halves[64];
  for (int offset = 0; offset < 32; ++offset) {
    const int64_t head = elements_to_vector_alignment<8>(halves + offset);
    CHECK(head == (8 - offset % 8) % 8);
    CHECK(is_vector_aligned<8>(halves + offset + head));
  }
}

TEST_CASE("operands that start equally far from a boundary share one head, and others do not") {
  alignas(16) static float a[64], b[64];
  alignas(16) static double wide[64];
  // x[1:] + y[1:]: both one float past a boundary, so three floats bring both to the next.
  const int64_t head = elements_to_vector_alignment<4>(a + 1);
  CHECK(head == 3);
  CHECK(is_vector_aligned<4>(b + 1 + head));
  // x[1:] + y[2:]: the head that aligns one leaves the other misaligned.
  CHECK(!is_vector_aligned<4>(b + 2 + head));
  // A float beside a double, two elements of each per vector: one element of head brings a
  // float one past a boundary to 8 bytes, and a double one past to 16; not a double on one.
  const int64_t mixed_head = elements_to_vector_alignment<2>(a + 1);
  CHECK(mixed_head == 1);
  CHECK(is_vector_aligned<2>(a + 1 + mixed_head));
  CHECK(is_vector_aligned<2>(wide + 1 + mixed_head));
  CHECK(!is_vector_aligned<2>(wide + mixed_head));
}

TEST_CASE("a pointer not aligned for one element is never vector aligned past its head") {
  alignas(16) static unsigned char bytes[64];
  for (int offset = 1; offset < 4; ++offset) {
    const auto* p =
        reinterpret_cast<const float*>(bytes + offset);  // foreign bytes, not a float array
    const int64_t head = elements_to_vector_alignment<4>(p);
    INFO("byte offset " << offset);
    CHECK(!is_vector_aligned<4>(p + head));
  }
}

}  // namespace
