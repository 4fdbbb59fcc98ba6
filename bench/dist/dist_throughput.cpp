// Candidates through the distributed roles' whole path, without a device: the coordinator's
// RemoteJudge publishes N run jobs (at most WINDOW pending), W run workers (dist/run_worker, each
// with its own connection, as separate processes would have) take them and answer with the fake
// judge at once (host/fake_judge.hpp), publish each verdict and ack the job once the broker
// confirmed it, and the coordinator stores the verdicts in batches of up to BATCH per transaction
// (Store::PutEvaluations, durable before it returns). Reports, for each W, jobs/s from the first
// submit to the last verdict stored. Everything runs in this process (on a 2-core machine the
// broker, the database and the workers share the two cores).
//
//   kf_dist_throughput AMQP_URL STORE_URL [--jobs N] [--workers 1,2,4,8] [--window W] [--batch B]

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/identity.hpp"
#include "core/kernel.hpp"
#include "core/task_bundle.hpp"
#include "core/task_library.hpp"
#include "dist/queue_names.hpp"
#include "dist/remote_judge.hpp"
#include "dist/run_worker.hpp"
#include "host/fake_judge.hpp"
#include "store/store.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace kf;

struct Options {
  std::string amqp, store;
  int jobs = 20000;
  std::vector<int> workers = {1, 2, 4, 8};
  int window = 512;
  int batch = 64;
};

Options Parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--jobs") {
      o.jobs = std::stoi(value());
    } else if (a == "--workers") {
      o.workers.clear();
      std::stringstream list(value());
      for (std::string n; std::getline(list, n, ',');) o.workers.push_back(std::stoi(n));
    } else if (a == "--window") {
      o.window = std::stoi(value());
    } else if (a == "--batch") {
      o.batch = std::stoi(value());
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2)
    throw std::invalid_argument("usage: kf_dist_throughput AMQP_URL STORE_URL [options]");
  o.amqp = positional[0];
  o.store = positional[1];
  return o;
}

// Verdicts waiting to be stored, written by one thread in batches.
class BatchWriter {
 public:
  BatchWriter(Store& store, std::string run, int batch)
      : store_(store), run_(std::move(run)), batch_(batch), thread_([this] { Loop(); }) {}
  ~BatchWriter() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Add(EvaluationWrite w) {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(w));
    cv_.notify_all();
  }
  long long stored() const { return stored_.load(); }

 private:
  void Loop() {
    for (;;) {
      std::vector<EvaluationWrite> batch;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        while (!queue_.empty() && static_cast<int>(batch.size()) < batch_) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      store_.PutEvaluations(run_, batch);
      stored_ += static_cast<long long>(batch.size());
    }
  }

  Store& store_;
  std::string run_;
  int batch_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<EvaluationWrite> queue_;
  bool stop_ = false;
  std::atomic<long long> stored_{0};
  std::thread thread_;
};

double RunOnce(const Options& o, Store& store, const Task& task, const TaskBundle& bundle,
               int workers) {
  const AmqpUrl url = ParseAmqpUrl(o.amqp);
  const std::string run = fmt::format("bench-dist-{}-{}-{}", workers, getpid(),
                                      Clock::now().time_since_epoch().count());
  store.OpenRun({run, task.name, "fake", {}, ""});
  DeviceInfo device = FakeDevice();
  device.name = "fake bench " + run;  // a queue of this run's own
  const Kernel kernel = LoadKernelFile(task.PathOf("baseline.cl"));

  std::vector<std::unique_ptr<AmqpClient>> clients;
  std::vector<std::unique_ptr<RunWorker>> pool;
  std::vector<std::thread> serving;
  std::atomic<bool> stop{false};
  for (int w = 0; w < workers; ++w) {
    clients.push_back(std::make_unique<AmqpClient>(url));
    RunWorkerOptions wo;
    wo.id = fmt::format("bench:{}:run", w);
    wo.host = "bench";
    wo.devices = {device};
    wo.cache_dir = fmt::format("/tmp/kf-dist-bench-cache-{}", getpid());
    wo.heartbeat_s = 5;
    pool.push_back(std::make_unique<RunWorker>(
        *clients.back(), store,
        [](const Task&, const std::string&, const EvalSettings&) {
          return std::make_unique<FakeJudge>();
        },
        wo));
    serving.emplace_back([&, w] { pool[static_cast<size_t>(w)]->Serve(stop); });
  }

  AmqpClient coordinator(url);
  RemoteJudgeOptions ro;
  ro.run = run;
  ro.task_id = bundle.id;
  ro.task_name = task.name;
  ro.run_queue = RunQueueName(device);
  ro.devices = [workers] { return workers; };
  RemoteJudge judge(coordinator, store, ro);
  BatchWriter writer(store, run, o.batch);
  std::mutex window_mu;
  std::condition_variable window_cv;
  int pending = 0;

  // The clock starts once every worker consumes its queues: a quorum queue just declared may
  // refuse a consumer for a moment (DeclareSettled tries again after 100 ms, 200 ms, ...), and
  // that start is the workers', not the path's; it is printed beside the figure.
  const Clock::time_point started = Clock::now();
  auto all_consuming = [&] {
    for (const auto& w : pool)
      if (!w->consuming()) return false;
    return true;
  };
  while (!all_consuming()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const Clock::time_point start = Clock::now();
  const double startup_s = std::chrono::duration<double>(start - started).count();
  for (int i = 0; i < o.jobs; ++i) {
    {
      std::unique_lock lock(window_mu);
      window_cv.wait(lock, [&] { return pending < o.window; });
      ++pending;
    }
    Candidate c;
    c.kernel = kernel;
    c.config = {{"I", std::to_string(i)}};
    c.key = EvaluationKey(CandidateId(KernelId(kernel), c.config), "fake", {});
    Config config = c.config;
    std::string key = c.key;
    judge.Submit(std::move(c), [&, config, key](JudgeResult r) {
      writer.Add({kernel, config, key, std::move(r.evaluation), {0, "search"}});
      std::lock_guard lock(window_mu);
      --pending;
      window_cv.notify_all();
    });
  }
  while (writer.stored() < o.jobs) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  stop = true;
  for (std::thread& t : serving) t.join();
  long long jobs_done = 0;
  for (const auto& w : pool) jobs_done += w->jobs_done();
  fmt::print(
      "{} worker{}: {} jobs in {:.2f} s = {:.0f} jobs/s (stored {}, jobs acked {}, "
      "duplicates dropped {}; the workers consumed {:.2f} s after they started)\n",
      workers, workers == 1 ? " " : "s", o.jobs, seconds, o.jobs / seconds, writer.stored(),
      jobs_done, judge.duplicates_dropped(), startup_s);
  std::fflush(stdout);
  return o.jobs / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = Parse(argc, argv);
    std::unique_ptr<Store> store = OpenStore(o.store);
    const Task task = FindTask("rope_llama3");
    const TaskBundle bundle = PackTaskFolder(task.dir, task.name);
    store->PutTaskBundle(bundle);
    fmt::print("{} jobs per run, window {}, verdicts stored {} per transaction, store {}\n", o.jobs,
               o.window, o.batch, RedactStoreUrl(o.store));
    for (int w : o.workers) RunOnce(o, *store, task, bundle, w);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
