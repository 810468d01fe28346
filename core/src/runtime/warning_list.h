// The runtime's warnings (bp::runtime_info().warnings), in the order they were given: the
// loader's own about BACKPLANE_* values and plugin files, and those plugins report through the
// core. It has a lock of its own, apart from the registry's, because a plugin may warn from any
// thread at any time, also from inside its init while the registry holds its lock to load it.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace bp::detail {

class WarningList {
 public:
  void add(std::string warning) {
    const std::lock_guard lock(mutex_);
    warnings_.push_back(std::move(warning));
  }

  std::vector<std::string> all() const {
    const std::lock_guard lock(mutex_);
    return warnings_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> warnings_;
};

}  // namespace bp::detail
