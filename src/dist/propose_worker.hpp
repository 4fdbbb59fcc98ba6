#pragma once
// A propose worker (`kfoundry worker --role propose`): does proposers' side effects for any run,
// taken from kf.propose: a chat request to a model (with the API key this worker holds: keys never
// travel) or a command run with the proposal request on its stdin. The result is published to the
// run's proposals queue before the job is acknowledged, so a worker that dies loses nothing: the
// broker gives the job to another worker. A job that kRunAttempts workers took without answering
// is answered as failed without being done again.
//
// Jobs run `concurrency` at a time (a model's latency, not this host, limits proposing). Its
// heartbeat (role "propose") says how many jobs it has done and the models it holds keys for.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dist/amqp_client.hpp"
#include "dist/propose_messages.hpp"
#include "propose/effects.hpp"
#include "store/store.hpp"

namespace kf {

struct ProposeWorkerOptions {
  std::string id;  // WorkerRecord::id: "HOST:PID:propose"
  std::string host;
  int concurrency = 4;
  double heartbeat_s = 5;
  // The models this worker holds (with their keys, URLs and limits as configured here): a chat
  // job naming one of them by label goes to it; any other goes where the job says, with
  // `api_key`.
  std::vector<ModelSettings> models;
  std::string api_key;
  ClientLimits limits;
  ChatService* chat = nullptr;         // tests: instead of this worker's own client
  CommandService* commands = nullptr;  // tests: instead of running here
};

class ProposeWorker {
 public:
  ProposeWorker(AmqpClient& amqp, Store& store, ProposeWorkerOptions options);
  ~ProposeWorker();
  ProposeWorker(const ProposeWorker&) = delete;
  ProposeWorker& operator=(const ProposeWorker&) = delete;

  // Serves until `stop` becomes true, then drains: takes no new job and finishes the ones it
  // holds. Returns "" (it has no failure of its own: an effect's failure is its job's result).
  std::string Serve(const std::atomic<bool>& stop);
  long long jobs_done() const { return jobs_done_.load(); }

 private:
  void Work();
  void Do(const Delivery& delivery);
  ProposeResultMessage Effect(const ProposeJobMessage& job, int64_t deliveries);
  void Heartbeat(const std::string& state);

  AmqpClient& amqp_;
  Store& store_;
  ProposeWorkerOptions options_;
  ChatClient client_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Delivery> waiting_;  // guarded by mu_
  bool closing_ = false;          // guarded by mu_
  std::atomic<int> busy_{0};
  std::atomic<long long> jobs_done_{0};
  std::vector<std::thread> threads_;
};

}  // namespace kf
