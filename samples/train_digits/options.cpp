#include "options.h"

#include "digits.h"

#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <string_view>
#include <system_error>

namespace {

template <typename T>
T parse_number(std::string_view name, std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument("--" + std::string(name) + " takes a number, got '" +
                                std::string(text) + "'");
  }
  return value;
}

template <typename T>
T parse_positive(std::string_view name, std::string_view text) {
  const T value = parse_number<T>(name, text);
  if (!(value > 0)) {
    throw std::invalid_argument("--" + std::string(name) + " must be above 0, got " +
                                std::string(text));
  }
  return value;
}

}  // namespace

const char* usage() {
  return "usage: train_digits [--epochs N] [--batch-size N] [--seed N] [--lr X] [--device D]\n"
         "                    [--min-accuracy PERCENT] [--data PATH] [--distributed]\n"
         "Trains a small CNN on the handwritten digits of Debian's python3-sklearn with AdamW,\n"
         "and tests it on a held-out fifth of them.\n"
         "  --epochs N              passes over the training images (default 15)\n"
         "  --batch-size N          images per step (default 32)\n"
         "  --seed N                seeds the split, the initial weights and the order of the\n"
         "                          training images (default 0)\n"
         "  --lr X                  AdamW's learning rate (default 0.003)\n"
         "  --device D              where to train, e.g. cpu or opencl:0 (default: the default\n"
         "                          device, BACKPLANE_DEFAULT_DEVICE)\n"
         "  --min-accuracy PERCENT  exit with status 1 when the test accuracy is below it\n"
         "  --data PATH             the digits.csv.gz to read (default: python3-sklearn's)\n"
         "  --distributed           under mpirun, split each batch across the ranks and average\n"
         "                          their gradients (bp::distributed::DataParallel)\n";
}

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.data = digits::kDefaultPath;
  for (int i = 1; i < argc; ++i) {
    std::string_view argument = argv[i];
    if (argument == "--help" || argument == "-h") {
      std::fputs(usage(), stdout);
      return std::nullopt;
    }
    if (!argument.starts_with("--")) {
      throw std::invalid_argument("unexpected argument '" + std::string(argument) + "'");
    }
    argument.remove_prefix(2);
    if (argument == "distributed") {
      options.distributed = true;
      continue;
    }
    std::string_view name = argument;
    std::string_view value;
    if (const size_t equals = argument.find('='); equals != std::string_view::npos) {
      name = argument.substr(0, equals);
      value = argument.substr(equals + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw std::invalid_argument("--" + std::string(name) + " needs a value");
    }
    if (name == "epochs") {
      options.epochs = parse_positive<int64_t>(name, value);
    } else if (name == "batch-size") {
      options.batch_size = parse_positive<int64_t>(name, value);
    } else if (name == "seed") {
      options.seed = parse_number<uint64_t>(name, value);
    } else if (name == "lr") {
      options.lr = parse_positive<double>(name, value);
    } else if (name == "device") {
      options.device = std::string(value);
    } else if (name == "min-accuracy") {
      options.min_accuracy = parse_number<double>(name, value);
    } else if (name == "data") {
      options.data = std::string(value);
    } else {
      throw std::invalid_argument("unknown option --" + std::string(name));
    }
  }
  return options;
}
