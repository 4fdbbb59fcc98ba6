#pragma once
// Reads a TOML file, turning a syntax error into an InputError that names the file and line.

#include <toml++/toml.h>

#include <string>

namespace kf {

toml::table ReadTomlFile(const std::string& path);

}  // namespace kf
