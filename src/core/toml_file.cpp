#include "core/toml_file.hpp"

#include "core/input_error.hpp"

namespace kf {

toml::table ReadTomlFile(const std::string& path) {
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw InputError(path, static_cast<int>(e.source().begin.line), "syntax",
                     std::string(e.description()));
  }
}

}  // namespace kf
