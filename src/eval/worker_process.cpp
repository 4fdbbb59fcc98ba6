#include "eval/worker_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <regex>

#include "eval/protocol.hpp"

namespace kf {

namespace {

// Moves `fd` to a descriptor >= 10 with close-on-exec, so the child can dup2 onto 3 and 4 safely.
int HighFd(int fd) {
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return high;
}

}  // namespace

WorkerProcess::Clock::time_point DeadlineIn(double seconds) {
  return WorkerProcess::Clock::now() + std::chrono::duration_cast<WorkerProcess::Clock::duration>(
                                           std::chrono::duration<double>(seconds));
}

nlohmann::json WorkerProcess::Start(const std::vector<std::string>& argv_in, double startup_s) {
  Stop();
  int request[2], reply[2], err[2];
  if (pipe2(request, O_CLOEXEC) != 0 || pipe2(reply, O_CLOEXEC) != 0 ||
      pipe2(err, O_CLOEXEC) != 0) {
    throw WorkerError(fmt::format("cannot create worker pipes: {}", std::strerror(errno)), 1);
  }
  for (int* fd : {&request[0], &request[1], &reply[0], &reply[1], &err[0], &err[1]})
    *fd = HighFd(*fd);
  std::vector<std::string> args = argv_in;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  Clock::time_point deadline = DeadlineIn(startup_s);
  pid_t pid = fork();
  if (pid < 0) throw WorkerError(fmt::format("fork failed: {}", std::strerror(errno)), 1);
  if (pid == 0) {  // only async-signal-safe calls until exec
    dup2(request[0], 3);
    dup2(reply[1], 4);
    dup2(err[1], 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(request[0]);
  close(reply[1]);
  close(err[1]);
  stderr_from_child_ = err[0];
  fcntl(stderr_from_child_, F_SETFL, O_NONBLOCK);
  pid_ = pid;
  to_child_ = request[1];
  fcntl(to_child_, F_SETPIPE_SZ, 1 << 20);  // room for a candidate sent ahead (best effort)
  from_child_ = reply[0];
  pending_.clear();

  nlohmann::json ready;
  ReadResult r = Read(deadline, &ready);
  if (r != ReadResult::kMessage || ready.contains("fatal")) {
    std::string why = r == ReadResult::kTimeout ? "did not become ready in time"
                      : r == ReadResult::kEof   ? DescribeExit("the worker")
                                                : ready["fatal"].get<std::string>();
    int code = r == ReadResult::kMessage ? ready.value("exit_code", 1) : 1;
    Stop();
    throw WorkerError(why, code);
  }
  return ready;
}

bool WorkerProcess::Send(const nlohmann::json& message) {
  return to_child_ >= 0 && SendMessage(to_child_, message);
}

bool WorkerProcess::SendIfRoom(const nlohmann::json& message) {
  if (to_child_ < 0) return false;
  std::string line = message.dump() + "\n";
  int capacity = fcntl(to_child_, F_GETPIPE_SZ), queued = 0;
  if (capacity <= 0 || ioctl(to_child_, FIONREAD, &queued) != 0) return false;
  if (static_cast<size_t>(queued) + line.size() > static_cast<size_t>(capacity)) return false;
  return WriteAll(to_child_, line);
}

void WorkerProcess::ForwardStderr(bool drain) {
  if (stderr_from_child_ < 0) return;
  char buf[65536];
  for (;;) {
    ssize_t n = read(stderr_from_child_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    stderr_pending_.append(buf, static_cast<size_t>(n));
  }
  static const std::regex chatter(R"(^\d+ (warning|error)s? generated\.$)");
  size_t newline;
  while ((newline = stderr_pending_.find('\n')) != std::string::npos) {
    std::string line = stderr_pending_.substr(0, newline);
    stderr_pending_.erase(0, newline + 1);
    if (!std::regex_match(line, chatter)) fmt::print(stderr, "{}\n", line);
  }
  if (drain && !stderr_pending_.empty()) {
    fmt::print(stderr, "{}\n", stderr_pending_);
    stderr_pending_.clear();
  }
}

void WorkerProcess::Stop() {
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) {
    bool exited = false;
    for (int i = 0; i < 50 && !exited; ++i) {
      exited = waitpid(pid_, nullptr, WNOHANG) == pid_;
      if (!exited) usleep(10000);
    }
    if (!exited) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }
  ForwardStderr(true);
  if (stderr_from_child_ >= 0) close(stderr_from_child_);
  stderr_from_child_ = -1;
}

std::string WorkerProcess::DescribeExit(const std::string& what) {
  int status = 0;
  if (pid_ <= 0) return what + " is not running";
  if (waitpid(pid_, &status, 0) != pid_) return what + " vanished";
  pid_ = -1;
  if (WIFSIGNALED(status))
    return fmt::format("{} died from {}", what, SignalName(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("{} exited with code {}", what, WEXITSTATUS(status));
  return what + " stopped";
}

WorkerProcess::ReadResult WorkerProcess::Read(Clock::time_point deadline, nlohmann::json* out) {
  for (;;) {
    size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      *out = nlohmann::json::parse(pending_.substr(0, newline), nullptr, false);
      pending_.erase(0, newline + 1);
      if (out->is_discarded()) continue;  // not ours: ignore a malformed line
      return ReadResult::kMessage;
    }
    if (from_child_ < 0) return ReadResult::kEof;
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadResult::kTimeout;
    pollfd p[2] = {{from_child_, POLLIN, 0}, {stderr_from_child_, POLLIN, 0}};
    int ready = poll(p, stderr_from_child_ >= 0 ? 2 : 1,
                     static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return ReadResult::kTimeout;
    if (stderr_from_child_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) {
      ForwardStderr(false);
      if (!(p[0].revents & (POLLIN | POLLHUP))) {
        if (p[1].revents & POLLHUP) {  // its stderr closed: watch the replies alone
          close(stderr_from_child_);
          stderr_from_child_ = -1;
        }
        continue;
      }
    }
    char buf[65536];
    ssize_t n = read(from_child_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ReadResult::kEof;
    pending_.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace kf
