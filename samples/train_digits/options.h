// The sample's command line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

struct Options {
  int64_t epochs = 15;
  int64_t batch_size = 32;
  uint64_t seed = 0;
  double lr = 3e-3;
  std::optional<std::string> device;  // bp::default_device() when not given
  double min_accuracy = 0;            // percent
  std::string data;                   // digits::kDefaultPath when not given
  bool distributed = false;           // each batch split across the ranks of an mpirun job
};

// Parses `--name value` or `--name=value` arguments. Returns nothing after printing the usage
// for --help; throws std::invalid_argument saying what is wrong with a bad argument.
std::optional<Options> parse_options(int argc, char** argv);

const char* usage();
