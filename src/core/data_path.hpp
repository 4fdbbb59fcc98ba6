#pragma once
// Where a data file or folder that ships with kfoundry is (rules, prompts, descriptors): the
// environment variable's value when it is set, else <binary>/../share/kfoundry/NAME when that
// exists (an installed kfoundry), else the source tree's copy the binary was built from.

#include <string>

namespace kf {

std::string DataPath(const char* env_var, const std::string& name, const std::string& source_path);

}  // namespace kf
