#pragma once
// One shape for every test of bad input: run the code, take the InputError it throws, then check its field and
// message with plain expectations, instead of a try / FAIL() / catch block (or a local catching helper) per test.
// Header only and outside any anonymous namespace: the unity builds compile several test sources as one.
#include <functional>
#include <optional>

#include "mlasim/model/input_error.h"

namespace mlasim::testing_support {

// The InputError `f` throws, or std::nullopt when it throws none (any other exception propagates).
inline std::optional<InputError> input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace mlasim::testing_support
