#pragma once
// The scripted chat-completions server (tests/servers/chat_server.py) as a test fixture: started
// on loopback with a script written from JSON, its request log read back, stopped when it goes
// out of scope. No network beyond 127.0.0.1.

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kf_process.hpp"

namespace kf::testing {

class ScriptedChatServer {
 public:
  // `script` as chat_server.py reads it; `folder` holds the script, the log and any
  // content_file the script names.
  ScriptedChatServer(const nlohmann::json& script, const std::string& folder) : folder_(folder) {
    std::filesystem::create_directories(folder);
    std::ofstream(folder + "/script.json") << script.dump(2);
    std::filesystem::remove(folder + "/port");
    std::filesystem::remove(folder + "/log.jsonl");
    std::string server = std::string(KF_TEST_DATA) + "/../servers/chat_server.py";
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      std::string script_path = folder + "/script.json", port = folder + "/port",
                  log = folder + "/log.jsonl", out = folder + "/server.out";
      freopen(out.c_str(), "w", stdout);
      execlp("python3", "python3", server.c_str(), "--script", script_path.c_str(), "--port", "0",
             "--port-file", port.c_str(), "--log", log.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(folder + "/port");
      if (in >> port_ && port_ > 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    Stop();
    throw std::runtime_error("the scripted chat server did not start (" + folder + ")");
  }
  ~ScriptedChatServer() { Stop(); }
  ScriptedChatServer(const ScriptedChatServer&) = delete;
  ScriptedChatServer& operator=(const ScriptedChatServer&) = delete;

  std::string base_url() const { return fmt::format("http://127.0.0.1:{}/v1", port_); }

  // One JSON object per request served so far.
  std::vector<nlohmann::json> Log() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(folder_ + "/log.jsonl");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  int MaxConcurrent() const {
    int most = 0;
    for (const nlohmann::json& e : Log()) most = std::max(most, e.value("concurrent", 0));
    return most;
  }

  // SIGTERM, and SIGKILL if that has not ended it within 5 s: a test never hangs on its server.
  void Stop() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGTERM);
    bool ended = false;
    for (int i = 0; i < 100 && !ended; ++i) {
      ended = waitpid(pid_, nullptr, WNOHANG) == pid_;
      if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!ended) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }

 private:
  std::string folder_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// A reply that answers with `text` (a kernel in a code block, prose, edits).
inline nlohmann::json Reply(const std::string& text) {
  return {{"content", text}};
}

}  // namespace kf::testing
