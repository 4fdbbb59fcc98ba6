#include "host/runner.hpp"

namespace kf {

void RunQueue::Push(RunJob job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_all();
}

namespace {

std::optional<RunJob> TakeFirst(std::deque<RunJob>& jobs, int index) {
  for (auto it = jobs.begin(); it != jobs.end(); ++it) {
    if (it->pinned < 0 || it->pinned == index) {
      RunJob job = std::move(*it);
      jobs.erase(it);
      return job;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<RunJob> RunQueue::Pop(int index) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (std::optional<RunJob> job = TakeFirst(jobs_, index)) return job;
    if (closed_) return std::nullopt;
    ++waiting_;
    wake_.wait(lock);
    --waiting_;
  }
}

std::optional<RunJob> RunQueue::TryPop(int index) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (waiting_ > 0) return std::nullopt;
  return TakeFirst(jobs_, index);
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
  auto skipped = [&](RunJob& job) {
    if (!job.cancelled || !job.cancelled()) return false;
    RunReply reply;
    reply.cancelled = true;
    reply.runner = index_;
    job.done(std::move(reply));
    return true;
  };
  std::optional<RunJob> job = queue_.Pop(index_);
  std::optional<int> ticket;  // set when `job` was sent ahead
  while (job) {
    if (!ticket && skipped(*job)) {
      job = queue_.Pop(index_);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    RunReply reply;
    std::optional<RunJob> next;
    std::optional<int> next_ticket;
    try {
      int t = ticket ? *ticket : supervisor->Submit(job->request);
      next = queue_.TryPop(index_);
      if (next && skipped(*next)) next.reset();
      // Without room in the channel now, it is sent when its turn comes.
      if (next) next_ticket = supervisor->SubmitAhead(next->request);
      reply = supervisor->Await(t);
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
    ticket = next_ticket;
    job = next ? std::move(next) : queue_.Pop(index_);
  }
}

}  // namespace kf
