#pragma once
// Bad user input: a flag, a JSON or CSV field, a head count the kernels do not support.
// The CLI turns it into one line on stderr and exit code 2.
#include <stdexcept>
#include <string>

namespace mlasim {

class InputError : public std::runtime_error {
 public:
  // `field` names the offending input (a flag, a JSON key, a policy knob); `message` says what is allowed.
  InputError(std::string field, const std::string& message)
      : std::runtime_error(field + ": " + message), field_(std::move(field)) {}

  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace mlasim
