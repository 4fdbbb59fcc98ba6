#include "eval/runner.hpp"

namespace kf {

void RunQueue::Push(RunJob job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_all();
}

std::optional<RunJob> RunQueue::Pop(int index) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      if (it->pinned < 0 || it->pinned == index) {
        RunJob job = std::move(*it);
        jobs_.erase(it);
        return job;
      }
    }
    if (closed_) return std::nullopt;
    wake_.wait(lock);
  }
}

void RunQueue::Close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  wake_.notify_all();
}

int RunQueue::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(jobs_.size());
}

Runner::Runner(int index, ExecutorOptions options, RunQueue& queue)
    : index_(index), options_(std::move(options)), queue_(queue) {
  std::promise<ExecutorInfo> ready;
  std::future<ExecutorInfo> started = ready.get_future();
  thread_ = std::thread([this, r = std::move(ready)]() mutable { Work(std::move(r)); });
  try {
    info_ = started.get();
  } catch (...) {
    thread_.join();
    throw;
  }
}

Runner::~Runner() {
  if (thread_.joinable()) thread_.join();
}

double Runner::busy_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return busy_seconds_;
}

int Runner::jobs_run() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_run_;
}

ExecutorCounters Runner::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

void Runner::Work(std::promise<ExecutorInfo> ready) {
  // The supervisor lives on this thread: its executor dies with the thread that forked it.
  std::unique_ptr<Supervisor> supervisor;
  try {
    supervisor = std::make_unique<Supervisor>(options_);
  } catch (...) {
    ready.set_exception(std::current_exception());
    return;
  }
  ready.set_value(supervisor->info());
  while (std::optional<RunJob> job = queue_.Pop(index_)) {
    if (job->cancelled && job->cancelled()) {
      RunReply skipped;
      skipped.cancelled = true;
      skipped.runner = index_;
      job->done(std::move(skipped));
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    RunReply reply;
    try {
      reply = supervisor->Run(job->request);
    } catch (const std::exception& e) {
      reply.tool_error = e.what();  // the tool failed, not the candidate: the caller stops
    }
    reply.runner = index_;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_seconds_ += s;
      ++jobs_run_;
      counters_ = supervisor->counters();
    }
    job->done(std::move(reply));
  }
}

}  // namespace kf
