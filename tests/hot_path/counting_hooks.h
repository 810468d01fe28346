// Counts the heap allocations (operator new, every form) and the pthread locks that the
// calling thread makes while a piece of code runs. The hooks replace operator new and delete
// and interpose pthread's lock functions in this test program only (counting_hooks.cpp).
#pragma once

#include <functional>

namespace hotpath {

struct Counts {
  int allocations = 0;
  int locks = 0;
};

// What `body` did on this thread; other threads' work is not counted.
Counts count_during(const std::function<void()>& body);

}  // namespace hotpath
