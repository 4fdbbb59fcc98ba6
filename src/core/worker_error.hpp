#pragma once
// The error for a process that could not start (an executor, a builder, a reference process),
// with the exit code the command line turns it into.

#include <stdexcept>
#include <string>

namespace kf {

// A worker could not start: a bad task (exit code 2), no device (3), anything else (1).
class WorkerError : public std::runtime_error {
 public:
  WorkerError(const std::string& message, int exit_code)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace kf
