// oneDNN runs on OpenMP, whose thread count is per calling thread: the cpu backend sets it to
// BACKPLANE_NUM_THREADS around its oneDNN calls and gives the caller's own setting back.
#include <backplane/backplane.h>

#include <doctest/doctest.h>

#include <omp.h>

TEST_CASE("oneDNN ops leave the calling thread's OpenMP thread count as the caller set it") {
  const int before = omp_get_max_threads();
  // A count the backend would not choose on its own.
  omp_set_num_threads(before + 3);
  bp::mm(bp::ones({8, 8}), bp::ones({8, 8}));
  bp::conv2d(bp::ones({1, 2, 5, 5}), bp::ones({3, 2, 3, 3}));
  CHECK(omp_get_max_threads() == before + 3);
  omp_set_num_threads(before);
}
