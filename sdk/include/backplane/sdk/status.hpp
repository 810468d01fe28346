// The bridge between C++ errors inside a plugin and the ABI's status codes: throw
// bp::plugin::Error (or let any exception escape a kernel), and the generated trampolines turn
// it into a bp_status plus a thread-local message that the core reads through last_error().
#pragma once

#include <backplane/abi.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace bp::plugin {

class Error : public std::runtime_error {
 public:
  Error(bp_status code, const std::string& message) : std::runtime_error(message), code_(code) {}
  bp_status code() const { return code_; }

 private:
  bp_status code_;
};

// Throws Error(BP_STATUS_INVALID_ARGUMENT, message) unless `condition` holds.
inline void check(bool condition, const std::string& message) {
  if (!condition) throw Error(BP_STATUS_INVALID_ARGUMENT, message);
}

// The calling thread's message for the latest failure. Plugins are built with hidden
// visibility, so each plugin has its own copy.
inline std::string& last_error_storage() {
  thread_local std::string message;
  return message;
}

inline const char* last_error() { return last_error_storage().c_str(); }

// Records `message` as the calling thread's last error and returns `code`.
inline bp_status fail(bp_status code, std::string message) {
  last_error_storage() = std::move(message);
  return code;
}

// Runs `body` and maps whatever it throws to a status, so that no exception crosses the ABI.
template <typename Body>
bp_status guard(Body&& body) noexcept {
  try {
    body();
    return BP_STATUS_OK;
  } catch (const Error& e) {
    return fail(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(BP_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(BP_STATUS_INTERNAL, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return fail(BP_STATUS_INTERNAL, "unexpected exception of unknown type");
  }
}

}  // namespace bp::plugin
