// The message of the bp::Error a call throws, for checks that read parts of it.
#pragma once

#include <backplane/error.h>

#include <string>

namespace autograd_test {

// What `body` threw as a bp::Error, or "<no error>".
template <typename Body>
std::string error_of(Body&& body) {
  try {
    body();
  } catch (const bp::Error& e) {
    return e.what();
  }
  return "<no error>";
}

inline bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

}  // namespace autograd_test
