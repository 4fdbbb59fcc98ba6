#include "eval/compile_ahead.hpp"

#include <fmt/format.h>

#include <memory>

namespace kf {

CompileAhead::CompileAhead(ExecutorOptions options)
    : options_(std::move(options)), worker_([this] { Work(); }) {}

CompileAhead::~CompileAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  worker_.join();
}

void CompileAhead::Replace(std::vector<std::pair<Kernel, Config>> candidates) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.assign(std::make_move_iterator(candidates.begin()),
                  std::make_move_iterator(candidates.end()));
  }
  wake_.notify_all();
}

int CompileAhead::compiled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiled_;
}

void CompileAhead::Work() {
  // The executor is started and stopped on this thread: its death signal follows the thread
  // that forked it.
  std::unique_ptr<Supervisor> executor;
  for (;;) {
    std::pair<Kernel, Config> next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) break;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      if (!executor) executor = std::make_unique<Supervisor>(options_);
      executor->Precompile(next.first, next.second);
    } catch (const std::exception& e) {
      // Compiling ahead is an optimisation: without it the evaluator compiles for itself.
      fmt::print(stderr, "compile-ahead stopped: {}\n", e.what());
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.clear();
      stop_ = true;
      break;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++compiled_;
  }
  executor.reset();
}

}  // namespace kf
