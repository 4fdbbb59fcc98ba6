#include "propose/command/command_proposer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "core/codec.hpp"
#include "core/input_error.hpp"

namespace kf {

namespace {

// write(2) to a pipe whose reader may be gone (a command that exits without reading its
// request): EPIPE for this call instead of a SIGPIPE that would end the whole process, whether
// or not the program ignores the signal. SIGPIPE is blocked for the write and, if the write
// raised it, taken back before it is unblocked.
ssize_t WriteToPipe(int fd, const char* data, size_t size) {
  sigset_t pipe_only, before, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ssize_t w = write(fd, data, size);
  const int error = errno;
  if (w < 0 && error == EPIPE && !was_pending) {
    timespec now{0, 0};
    sigtimedwait(&pipe_only, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = error;
  return w;
}

}  // namespace

// Runs `/bin/sh -c command` in its own process group with `input` on stdin; collects stdout (up
// to `max_out` bytes), passes stderr on line by line; kills the group at the deadline.
CommandRun RunCommandHere(const std::string& command, const std::string& input, double timeout_s,
                          size_t max_out, const std::string& label) {
  CommandRun done;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    done.failure = fmt::format("cannot create pipes: {}", std::strerror(errno));
    return done;
  }
  pid_t pid = fork();
  if (pid < 0) {
    done.failure = fmt::format("fork failed: {}", std::strerror(errno));
    return done;
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // both sides, so the group exists whichever runs first
  close(in[0]);
  close(out[1]);
  close(err[1]);
  for (int fd : {in[1], out[0], err[0]}) fcntl(fd, F_SETFL, O_NONBLOCK);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_s));
  size_t written = 0;
  int to_child = in[1];
  if (input.empty()) {
    close(to_child);
    to_child = -1;
  }
  std::string err_pending;
  auto forward = [&](bool all) {
    size_t nl;
    while ((nl = err_pending.find('\n')) != std::string::npos) {
      fmt::print(stderr, "{}: {}\n", label, err_pending.substr(0, nl));
      err_pending.erase(0, nl + 1);
    }
    if (all && !err_pending.empty()) fmt::print(stderr, "{}: {}\n", label, err_pending);
    if (all) err_pending.clear();
  };
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      done.failure = fmt::format("no reply within {:.0f} s", timeout_s);
      break;
    }
    pollfd p[3] = {{out_open ? out[0] : -1, POLLIN, 0},
                   {err_open ? err[0] : -1, POLLIN, 0},
                   {to_child, POLLOUT, 0}};
    int n = poll(p, 3, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      done.failure = fmt::format("poll failed: {}", std::strerror(errno));
      break;
    }
    char buf[65536];
    if (to_child >= 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = WriteToPipe(to_child, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN && errno != EINTR) written = input.size();  // it stopped reading
      if (written >= input.size()) {
        close(to_child);
        to_child = -1;
      }
    }
    if (out_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = read(out[0], buf, sizeof(buf));
      if (r > 0) done.out.append(buf, static_cast<size_t>(r));
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) out_open = false;
      if (done.out.size() > max_out) {
        done.failure = fmt::format("the reply is over {} bytes", max_out);
        break;
      }
    }
    if (err_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = read(err[0], buf, sizeof(buf));
      if (r > 0 && err_pending.size() < (1 << 16)) err_pending.append(buf, static_cast<size_t>(r));
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) err_open = false;
      forward(false);
    }
  }
  forward(true);
  if (to_child >= 0) close(to_child);
  close(out[0]);
  close(err[0]);
  if (!done.failure.empty()) kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (done.failure.empty()) {
    if (WIFSIGNALED(status)) {
      done.failure = fmt::format("the command died from signal {}", WTERMSIG(status));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      done.failure = fmt::format("the command exited with code {}", WEXITSTATUS(status));
    }
  }
  return done;
}

ReplyText ParseReplyText(const std::string& out) {
  ReplyText r;
  size_t first = out.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    r.error = "empty reply";
    return r;
  }
  if (out[first] != '{') {
    r.source = out;
    return r;
  }
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (!j.is_object()) {
    r.error = "the reply starts with '{' but is not a JSON object";
    return r;
  }
  r.notes = j.value("notes", "");
  r.name = j.value("name", "");
  if (j.value("nothing_new", false)) {
    r.nothing_new = true;
    return r;
  }
  if (!j.contains("source") || !j["source"].is_string() || j["source"].get<std::string>().empty()) {
    r.error = "the JSON reply has no \"source\" string";
    return r;
  }
  r.source = j["source"].get<std::string>();
  return r;
}

CommandProposer::CommandProposer(const Task& task, CommandProposerOptions options)
    : task_(task), options_(std::move(options)) {}

ProposalOutcome CommandProposer::Propose(const ProposalRequest& request) {
  const std::string input = ProposalRequestToJson(request, &task_).dump() + "\n";
  const std::string label = fmt::format("proposer p{}", request.index);
  CommandRun done = options_.runner && options_.runner->Available()
                        ? options_.runner->Run(options_.command, input, options_.timeout_s,
                                               options_.max_output_bytes, label)
                        : RunCommandHere(options_.command, input, options_.timeout_s,
                                         options_.max_output_bytes, label);
  if (!done.failure.empty()) return ProposalOutcome::BadReply(done.failure);
  ReplyText reply = ParseReplyText(done.out);
  if (!reply.error.empty()) return ProposalOutcome::BadReply(reply.error);
  if (reply.nothing_new)
    return ProposalOutcome::NothingNew(reply.notes.empty() ? "the command had nothing new"
                                                           : reply.notes);
  std::string ext = request.language == Language::kCuda ? ".cu" : ".cl";
  std::string name = reply.name.empty() ? fmt::format("command-p{}", request.index) : reply.name;
  // Only a plain file name: the reply must not choose where anything is written.
  name = std::filesystem::path(name).filename().string();
  if (std::filesystem::path(name).extension() != ext) name += ext;
  Proposal p;
  try {
    p.kernel = ParseKernel(task_.PathOf(name), reply.source);
  } catch (const InputError& e) {
    return ProposalOutcome::BadReply(std::string("the kernel's annotations: ") + e.what());
  }
  p.origin = "command " + name;
  p.notes = reply.notes;
  if (request.parent) {
    p.parent_kernel_id = request.parent->kernel_id;
    p.parent_cell = request.parent->cell;
    p.mutations = request.parent->mutations;
  }
  p.mutations.push_back("command");
  return ProposalOutcome::Ok(std::move(p));
}

}  // namespace kf
