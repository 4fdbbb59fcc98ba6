#pragma once
// This machine's host name, as workers' heartbeats and the run lease's holder name give it.

#include <unistd.h>

#include <string>

namespace kf {

inline std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

}  // namespace kf
