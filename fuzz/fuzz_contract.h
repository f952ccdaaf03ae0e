#pragma once
// The contract every fuzz target checks: a reader or planner given any bytes either returns a valid result or
// throws exactly one mlasim::InputError. Any other exception, a broken invariant of the result, a crash or a
// sanitizer report is a bug; the first three abort here so libFuzzer saves the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

#include "mlasim/model/input_error.h"

namespace mlasim::fuzz {

// Reports a broken contract and aborts (libFuzzer records the input as a crash).
[[noreturn]] inline void contract_violation(const std::string& what) {
  std::fprintf(stderr, "fuzz contract violated: %s\n", what.c_str());
  std::abort();
}

// Aborts with `what` unless `condition` holds.
inline void require(bool condition, const std::string& what) {
  if (!condition) contract_violation(what);
}

// Runs `body`: returning normally or throwing an InputError (bad input, said in one message) is fine; any other
// exception escaping a reader or planner is a bug.
template <typename Body>
void expect_result_or_input_error(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
    // The one allowed failure.
  } catch (const std::exception& e) {
    contract_violation(std::string("unexpected exception ") + typeid(e).name() + ": " + e.what());
  } catch (...) {
    contract_violation("unexpected exception of a non-std type");
  }
}

// The fuzz input as text (readers take std::string or std::string_view).
inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace mlasim::fuzz
