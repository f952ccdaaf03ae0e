#pragma once
// Bad user input: a flag, a JSON or CSV field, a head count the kernels do not support.
// The CLI turns it into one line on stderr and exit code 2.
#include <stdexcept>
#include <string>

namespace mlasim {

class InputError : public std::runtime_error {
 public:
  // `field` names the offending input (a flag, a JSON key, a policy knob); `message` says what is allowed.
  InputError(std::string field, std::string message)
      : std::runtime_error(field + ": " + message), field_(std::move(field)), message_(std::move(message)) {}

  const std::string& field() const { return field_; }
  // What is wrong, without the field: for an error passed on under another field or with more context.
  const std::string& message() const { return message_; }

 private:
  std::string field_;
  std::string message_;
};

}  // namespace mlasim
