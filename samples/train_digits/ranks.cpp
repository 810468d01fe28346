#include "ranks.h"

#include <stdexcept>

#if BP_TRAIN_DIGITS_DISTRIBUTED
#include <backplane/data_parallel.h>
#include <backplane/distributed.h>

#include <cstring>
#include <optional>

struct Ranks::Group {
  bp::distributed::ProcessGroup& group = bp::distributed::init();
  std::optional<bp::distributed::DataParallel> data_parallel;
};

Ranks::Ranks(bool distributed) {
  if (!distributed) return;
  group_ = std::make_unique<Group>();
  rank_ = group_->group.rank();
  size_ = group_->group.size();
}

void Ranks::take_first_ranks(bp::Tensor& tensor) {
  if (group_) group_->group.broadcast(tensor, 0);
}

std::vector<double> Ranks::sum(const std::vector<double>& values) {
  if (!group_) return values;
  bp::Tensor sums = bp::from_vector(values, {static_cast<int64_t>(values.size())});
  group_->group.all_reduce(sums);
  return sums.to_vector<double>();
}

void Ranks::train_together(const DigitsNet& net) {
  if (group_)
    group_->data_parallel.emplace(group_->group, net.parameters(),
                                  bp::distributed::DataParallelOptions{}, net.buffers());
}

void Ranks::before_forward() {
  if (group_ && group_->data_parallel) group_->data_parallel->broadcast_buffers();
}

bool Ranks::parameters_identical(const DigitsNet& net) {
  if (!group_) return true;
  double differing = 0;
  for (const bp::Tensor& parameter : net.parameters()) {
    bp::Tensor first = parameter.detach().clone();
    group_->group.broadcast(first, 0);
    const bp::Tensor mine = parameter.detach().cpu().contiguous();
    first = first.cpu().contiguous();
    differing += std::memcmp(first.const_data_ptr(), mine.const_data_ptr(),
                             static_cast<size_t>(mine.numel()) * mine.element_size()) != 0;
  }
  return sum({differing})[0] == 0;
}

#else

struct Ranks::Group {};

Ranks::Ranks(bool distributed) {
  if (distributed) {
    throw std::invalid_argument(
        "--distributed needs bp::distributed, which this build does not have: install "
        "libopenmpi-dev and openmpi-bin, and configure again");
  }
}

void Ranks::take_first_ranks(bp::Tensor&) {}
std::vector<double> Ranks::sum(const std::vector<double>& values) { return values; }
void Ranks::train_together(const DigitsNet&) {}
void Ranks::before_forward() {}
bool Ranks::parameters_identical(const DigitsNet&) { return true; }

#endif

Ranks::~Ranks() = default;

std::pair<int64_t, int64_t> Ranks::share(int64_t batch_begin, int64_t batch_end) const {
  const int64_t length = batch_end - batch_begin;
  return {batch_begin + length * rank_ / size_, batch_begin + length * (rank_ + 1) / size_};
}
