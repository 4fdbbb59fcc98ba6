#pragma once
// The error for a bad input file (task, kernel, annotation): it names the file, the line and the
// field, and the command line turns it into exit code 2.

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace kf {

class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, int line, const std::string& field,
             const std::string& message)
      : std::runtime_error(line > 0 ? fmt::format("{}:{}: {}: {}", file, line, field, message)
                                    : fmt::format("{}: {}: {}", file, field, message)) {}
};

}  // namespace kf
