#pragma once
// Running the kfoundry binary from an integration test: the binary under test ($KF_TEST_BINARY,
// for a build carried to another machine, else the one built here), and one call that runs it with
// the test cache and task library and returns its exit code, stdout, stderr and stdout as JSON;
// whether a backend has a device here.

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace kf::testing {

inline std::string KfBinary() {
  const char* b = std::getenv("KF_TEST_BINARY");
  return b && *b ? b : KF_BINARY;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct KfResult {
  int exit_code = -1;
  std::string out, err;
  nlohmann::json json;  // discarded (is_discarded()) when stdout is not one JSON object
};

// `env` is put before the binary ("NAME=VALUE ..."), after (so over) the test cache and tasks.
inline KfResult RunKfoundry(const std::string& args, const std::string& env = "") {
  std::string err_file = fmt::format("{}/stderr.{}.txt", KF_TEST_CACHE, getpid());
  std::system(fmt::format("mkdir -p {}", KF_TEST_CACHE).c_str());
  std::string cmd = fmt::format("KF_CACHE_DIR={} KF_TASKS_DIR={} {} {} {} 2>{}", KF_TEST_CACHE,
                                KF_TASKS, env, KfBinary(), args, err_file);
  KfResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.out.append(buf, n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = ReadText(err_file);
  r.json = nlohmann::json::parse(r.out, nullptr, false);
  return r;
}

// Whether `kfoundry devices` lists a device of this backend (cuda, opencl); asked once per backend.
inline bool HasBackend(const std::string& backend) {
  static std::map<std::string, bool> known;
  auto it = known.find(backend);
  if (it != known.end()) return it->second;
  KfResult r = RunKfoundry("devices --json");
  bool found = false;
  if (r.json.is_object()) {
    for (const auto& d : r.json["devices"]) found = found || d["backend"] == backend;
  }
  return known[backend] = found;
}

// A fresh folder for one test's files: KF_TEST_CACHE/PREFIX.NAME.PID, emptied first.
inline std::string Scratch(const std::string& prefix, const std::string& name) {
  std::string dir = fmt::format("{}/{}.{}.{}", KF_TEST_CACHE, prefix, name, getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace kf::testing
