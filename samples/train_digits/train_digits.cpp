// Trains DigitsNet on four fifths of the handwritten digits with AdamW and cross_entropy_loss,
// printing each epoch's loss, training accuracy and speed, then tests it on the other fifth.
// For a given seed (and thread count) every run gives the same numbers.
#include "digits.h"
#include "model.h"
#include "options.h"
#include "ranks.h"

#include <backplane/backplane.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace {

// A random order of 0..count-1 from Backplane's generator: indices sorted by a random key each.
std::vector<int64_t> random_order(int64_t count) {
  const std::vector<double> keys =
      bp::rand({count}, bp::kFloat64, bp::Device::cpu()).to_vector<double>();
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::ranges::stable_sort(order, {}, [&](int64_t i) { return keys[static_cast<size_t>(i)]; });
  return order;
}

// Images and labels on the device the network runs on.
struct Split {
  bp::Tensor images;  // [N, 1, 8, 8] Float32
  bp::Tensor labels;  // [N] Int64
  std::vector<int64_t> host_labels;
  int64_t size() const { return static_cast<int64_t>(host_labels.size()); }
};

Split take(const digits::DataSet& data, const std::vector<int64_t>& rows, bp::Device device) {
  Split split;
  std::vector<float> pixels;
  pixels.reserve(rows.size() * digits::kPixels);
  for (const int64_t row : rows) {
    const auto first = data.pixels.begin() + row * digits::kPixels;
    pixels.insert(pixels.end(), first, first + digits::kPixels);
    split.host_labels.push_back(data.labels[static_cast<size_t>(row)]);
  }
  const auto count = static_cast<int64_t>(rows.size());
  split.images = bp::from_vector(pixels, {count, 1, digits::kSide, digits::kSide}).to(device);
  split.labels = bp::from_vector(split.host_labels, {count}).to(device);
  return split;
}

// How many of `logits`' argmax equal `labels` (host copies of the batch's labels).
int64_t count_correct(const bp::Tensor& logits, const int64_t* labels) {
  const std::vector<int64_t> predicted = bp::argmax(logits, 1).cpu().to_vector<int64_t>();
  int64_t correct = 0;
  for (size_t i = 0; i < predicted.size(); ++i) correct += predicted[i] == labels[i];
  return correct;
}

// The split's rows [begin, end) in `order`, as an index tensor on `device`.
bp::Tensor batch_index(const std::vector<int64_t>& order, int64_t begin, int64_t end,
                       bp::Device device) {
  const std::vector<int64_t> rows(order.begin() + begin, order.begin() + end);
  return bp::from_vector(rows, {end - begin}).to(device);
}

double percent(int64_t part, int64_t whole) { return 100.0 * part / whole; }

int train(const Options& options) {
  Ranks ranks(options.distributed);
  const bp::Device device = options.device ? bp::Device(*options.device) : bp::default_device();
  const digits::DataSet data = digits::load(options.data);

  bp::manual_seed(options.seed);
  const std::vector<int64_t> shuffled = random_order(data.size());
  const int64_t test_size = (data.size() + 4) / 5;
  const std::vector<int64_t> test_rows(shuffled.begin(), shuffled.begin() + test_size);
  const std::vector<int64_t> train_rows(shuffled.begin() + test_size, shuffled.end());
  const Split train_set = take(data, train_rows, device);
  const Split test_set = take(data, test_rows, device);
  if (ranks.reports()) {
    std::printf("train_digits: %lld training and %lld test images of 8x8 digits, on %s",
                static_cast<long long>(train_set.size()), static_cast<long long>(test_set.size()),
                device.str().c_str());
    if (options.distributed) std::printf(", each batch split across %d ranks", ranks.size());
    std::printf("\n");
  }

  DigitsNet net(device);
  ranks.train_together(net);
  bp::optim::AdamW optimizer(net.parameters(), {.lr = options.lr});

  for (int64_t epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<int64_t> order = random_order(train_set.size());
    bp::Tensor shared_order = bp::from_vector(order, {train_set.size()});
    ranks.take_first_ranks(shared_order);
    order = shared_order.to_vector<int64_t>();
    double loss_sum = 0;
    int64_t correct = 0;
    for (int64_t begin = 0; begin < train_set.size(); begin += options.batch_size) {
      const int64_t end = std::min(begin + options.batch_size, train_set.size());
      // This rank's share. Its mean loss is scaled so that the ranks' average gradient is that
      // of the whole batch's mean loss, even when the shares differ by one.
      const auto [first, last] = ranks.share(begin, end);
      const double share_weight =
          static_cast<double>((last - first) * ranks.size()) / static_cast<double>(end - begin);
      const bp::Tensor index = batch_index(order, first, last, device);
      ranks.before_forward();
      const bp::Tensor logits = net.forward(bp::index_select(train_set.images, 0, index), true);
      const bp::Tensor loss =
          bp::cross_entropy_loss(logits, bp::index_select(train_set.labels, 0, index));
      optimizer.zero_grad();
      bp::mul(loss, share_weight).backward();
      optimizer.step();

      loss_sum += loss.cpu().item<float>() * static_cast<double>(last - first);
      std::vector<int64_t> labels(static_cast<size_t>(last - first));
      for (int64_t i = first; i < last; ++i) {
        labels[static_cast<size_t>(i - first)] =
            train_set.host_labels[static_cast<size_t>(order[static_cast<size_t>(i)])];
      }
      correct += count_correct(logits, labels.data());
    }
    const std::vector<double> totals = ranks.sum({loss_sum, static_cast<double>(correct)});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (ranks.reports()) {
      std::printf("epoch %3lld/%lld  loss %.4f  train accuracy %6.2f%%  %.0f examples/s\n",
                  static_cast<long long>(epoch), static_cast<long long>(options.epochs),
                  totals[0] / static_cast<double>(train_set.size()),
                  100.0 * totals[1] / static_cast<double>(train_set.size()),
                  static_cast<double>(train_set.size()) / seconds);
      std::fflush(stdout);
    }
  }

  ranks.before_forward();
  const bp::NoGradGuard no_grad;
  const bp::Tensor logits = net.forward(test_set.images, /*training=*/false);
  const int64_t correct = count_correct(logits, test_set.host_labels.data());
  const double accuracy = percent(correct, test_set.size());
  if (ranks.reports()) {
    std::printf("test accuracy: %.2f%% (%lld of %lld)\n", accuracy, static_cast<long long>(correct),
                static_cast<long long>(test_set.size()));
  }
  if (options.distributed) {
    if (!ranks.parameters_identical(net)) {
      std::fprintf(stderr, "train_digits: after training, the ranks' parameters differ\n");
      return 1;
    }
    if (ranks.reports()) {
      std::printf("parameters identical, bit for bit, on all %d ranks\n", ranks.size());
    }
  }
  if (accuracy < options.min_accuracy) {
    std::fprintf(stderr, "train_digits: the test accuracy %.2f%% is below --min-accuracy %g%%\n",
                 accuracy, options.min_accuracy);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options;
  try {
    options = parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "train_digits: %s\n%s", e.what(), usage());
    return 2;
  }
  if (!options) return 0;
  try {
    return train(*options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_digits: %s\n", e.what());
    return 1;
  }
}
