#include "host/builder.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "backend/registry.hpp"
#include "core/codec.hpp"
#include "eval/compile_cache.hpp"
#include "eval/executor_main.hpp"
#include "eval/protocol.hpp"
#include "eval/worker_process.hpp"

namespace kf {

BuilderPool::BuilderPool(BuilderOptions options) : options_(std::move(options)) {
  int jobs = options_.jobs > 0
                 ? options_.jobs
                 : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 0; i < jobs; ++i) threads_.emplace_back([this] { Work(); });
}

BuilderPool::~BuilderPool() {
  std::deque<std::pair<CompileRequest, Done>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
  for (auto& [request, done] : dropped) done(std::nullopt);
}

void BuilderPool::Submit(CompileRequest request, Done done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.emplace_back(std::move(request), std::move(done));
  }
  wake_.notify_one();
}

int BuilderPool::compiled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiled_;
}

int BuilderPool::deadline_kills() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return deadline_kills_;
}

void BuilderPool::Work() {
  // The builder is started, used and stopped on this thread: it dies with the thread that forked
  // it.
  WorkerProcess builder;
  bool unavailable = false;
  int next_id = 0;
  const std::vector<std::string> argv = {options_.binary, "builder",
                                         "--target",      DeviceInfoToJson(options_.target).dump(),
                                         "--parent",      std::to_string(getpid())};
  for (;;) {
    std::pair<CompileRequest, Done> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) break;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    if (!unavailable && !builder.running()) {
      try {
        builder.Start(argv, options_.startup_timeout_s);
      } catch (const WorkerError& e) {
        fmt::print(stderr, "builder: {}; compiling where the device is instead\n", e.what());
        unavailable = true;
      }
    }
    if (unavailable) {
      job.second(std::nullopt);
      continue;
    }
    int id = ++next_id;
    CompileResult result;
    bool killed = false;
    if (!builder.Send(
            {{"id", id}, {"op", "compile"}, {"compile", CompileRequestToJson(job.first)}})) {
      result.log = builder.DescribeExit("the builder") + " before the compile was sent";
      builder.Stop();
    } else {
      auto deadline = DeadlineIn(options_.compile_timeout_s);
      for (;;) {
        nlohmann::json message;
        WorkerProcess::ReadResult r = builder.Read(deadline, &message);
        if (r == WorkerProcess::ReadResult::kTimeout) {
          builder.Stop();
          killed = true;
          result.log = fmt::format("compilation ran past its deadline of {:.0f} s",
                                   options_.compile_timeout_s);
          break;
        }
        if (r == WorkerProcess::ReadResult::kEof) {
          result.log = builder.DescribeExit("the builder") + " while compiling";
          builder.Stop();
          break;
        }
        if (message.value("id", -1) != id) continue;
        result = CompileResultFromJson(message.at("result"));
        break;
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++compiled_;
      deadline_kills_ += killed;
    }
    job.second(std::move(result));
  }
  builder.Stop();
}

int RunBuilder(const BuilderArgs& args) {
  if (!BecomeWorker(args.parent, 0, 0)) return 1;
  const int out = args.out_fd;
  DeviceInfo target;
  std::unique_ptr<Compiler> compiler;
  try {
    target = DeviceInfoFromJson(nlohmann::json::parse(args.target_json));
    auto backends = MakeBackends();
    std::string why;
    compiler = MakeOfflineCompiler(backends, target, &why);
    if (!compiler) {
      SendMessage(out,
                  {{"fatal", "no compiler for " + target.Label() + ": " + why}, {"exit_code", 1}});
      return 1;
    }
  } catch (const std::exception& e) {
    SendMessage(out, {{"fatal", std::string("bad builder target: ") + e.what()}, {"exit_code", 1}});
    return 1;
  }
  CompileCache cache(DefaultCacheDir());
  SendMessage(out, {{"ready", true}, {"target", target.Label()}, {"pid", getpid()}});
  MessageReader requests(args.in_fd);
  while (std::optional<nlohmann::json> request = requests.Next()) {
    int id = request->value("id", 0);
    CompileResult result;
    try {
      result =
          CompileCached(*compiler, target, cache, CompileRequestFromJson(request->at("compile")));
    } catch (const std::exception& e) {
      result.log = std::string("bad compile request: ") + e.what();
    }
    SendMessage(out, {{"id", id}, {"result", CompileResultToJson(result)}});
  }
  return 0;
}

}  // namespace kf
