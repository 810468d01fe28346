// Gradients of the matrix products and the composites over them, against finite differences.
#include "gradcheck.h"

using namespace gradtest;
using bp::Tensor;
using Args = std::vector<Tensor>;

TEST_CASE("mm and bmm: both operands, transposed ones too") {
  gradcheck([](const Args& t) { return bp::mm(t[0], t[1]); },
            {{{2, 3}, Layout::Transposed}, {{3, 4}}});
  gradcheck([](const Args& t) { return bp::bmm(t[0], t[1]); },
            {{{2, 2, 3}}, {{2, 3, 2}, Layout::Transposed}});
}

TEST_CASE("addmm: the broadcast bias and both operands, with beta and alpha") {
  gradcheck([](const Args& t) { return bp::addmm(t[0], t[1], t[2], 0.5, 2.0); },
            {{{3}}, {{2, 4}, Layout::Strided}, {{4, 3}, Layout::Transposed}});
}

TEST_CASE("matmul and linear differentiate through the ops they are made of") {
  gradcheck([](const Args& t) { return bp::matmul(t[0], t[1]); }, {{{2, 2, 3}}, {{3, 2}}});
  gradcheck([](const Args& t) { return bp::matmul(t[0], t[1]); }, {{{3}}, {{3, 2}}});
  gradcheck([](const Args& t) { return bp::linear(t[0], t[1], t[2]); },
            {{{4, 3}, Layout::Transposed}, {{2, 3}}, {{2}}});
  gradcheck([](const Args& t) { return bp::linear(t[0], t[1]); }, {{{2, 2, 3}}, {{2, 3}}});
}
