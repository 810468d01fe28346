// The processes that train together: this process alone, or, with --distributed, the ranks of
// an mpirun job, each training on its share of every batch (bp::distributed::DataParallel).
#pragma once

#include "model.h"

#include <backplane/backplane.h>

#include <memory>
#include <vector>

class Ranks {
 public:
  // Joins the mpirun job when `distributed` (a std::invalid_argument when this build has no
  // bp::distributed).
  explicit Ranks(bool distributed);
  ~Ranks();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Whether this process prints the run's figures: the first rank.
  bool reports() const { return rank_ == 0; }

  // This rank's rows [begin, end) of the batch [batch_begin, batch_end).
  std::pair<int64_t, int64_t> share(int64_t batch_begin, int64_t batch_end) const;

  // Makes every rank's `tensor` the first rank's.
  void take_first_ranks(bp::Tensor& tensor);
  // The sums of `values` over the ranks.
  std::vector<double> sum(const std::vector<double>& values);

  // Starts every rank from the first rank's parameters and buffers, and averages the gradients
  // of every later backward pass across the ranks.
  void train_together(const DigitsNet& net);
  // Before each forward pass: the first rank's batch_norm statistics on every rank.
  void before_forward();
  // Whether every rank holds, bit for bit, the first rank's parameters.
  bool parameters_identical(const DigitsNet& net);

 private:
  struct Group;  // the process group and DataParallel, where this build has them
  std::unique_ptr<Group> group_;
  int rank_ = 0;
  int size_ = 1;
};
