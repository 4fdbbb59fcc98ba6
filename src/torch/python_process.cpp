#include "torch/python_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/data_path.hpp"

namespace kf {

namespace {

constexpr size_t kMaxOut = size_t{64} << 20;  // the answer of an inspection is kilobytes
constexpr size_t kMaxErr = size_t{64} << 10;

void AppendBounded(std::string& to, const char* data, size_t n, size_t max) {
  to.append(data, n);
  if (to.size() > max) to.erase(0, to.size() - max);
}

}  // namespace

std::string TorchHelpersDir() {
  return DataPath("KF_TORCH_HELPERS", "torch", KF_SOURCE_TORCH_DIR);
}

PythonRun RunPython(const std::string& interpreter, const std::string& helper,
                    const std::vector<std::string>& args, double timeout_s) {
  PythonRun run;
  run.interpreter = interpreter;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    run.failure = fmt::format("cannot create pipes: {}", std::strerror(errno));
    return run;
  }
  std::vector<std::string> argv_s = {interpreter, helper};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    run.failure = fmt::format("fork failed: {}", std::strerror(errno));
    return run;
  }
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execvp(argv[0], argv.data());
    fmt::print(stderr, "cannot run {}: {}\n", interpreter, std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // both sides, so the group exists whichever runs first
  close(out[1]);
  close(err[1]);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_s));
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      run.failure = fmt::format("it did not finish within {:.0f} s", timeout_s);
      break;
    }
    pollfd p[2] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}};
    int n = poll(p, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      run.failure = fmt::format("poll failed: {}", std::strerror(errno));
      break;
    }
    char buf[65536];
    if (out_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = read(out[0], buf, sizeof(buf));
      if (r > 0) run.out.append(buf, static_cast<size_t>(r));
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) out_open = false;
      if (run.out.size() > kMaxOut) {
        run.failure = fmt::format("its answer is over {} bytes", kMaxOut);
        break;
      }
    }
    if (err_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = read(err[0], buf, sizeof(buf));
      if (r > 0) AppendBounded(run.err, buf, static_cast<size_t>(r), kMaxErr);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) err_open = false;
    }
  }
  close(out[0]);
  close(err[0]);
  if (!run.failure.empty()) kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!run.failure.empty()) return run;
  if (WIFSIGNALED(status)) {
    run.failure =
        fmt::format("it died from signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  }
  return run;
}

PythonRun RunTorchHelper(const std::string& helper, const std::vector<std::string>& args,
                         double timeout_s) {
  if (const char* env = std::getenv("KF_PYTHON"); env && *env)
    return RunPython(env, helper, args, timeout_s);
  PythonRun run = RunPython("python3", helper, args, timeout_s);
  std::error_code ec;
  if ((run.exit_code == kPythonNoTorch || run.exit_code == 127) &&
      std::filesystem::exists("/usr/bin/python3", ec))
    return RunPython("/usr/bin/python3", helper, args, timeout_s);
  return run;
}

}  // namespace kf
