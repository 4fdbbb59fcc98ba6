#pragma once
// Compiling ahead: a second supervised executor compiles the candidates the search is about to
// evaluate into the shared compile cache, while the evaluating executor checks and times the
// current one, so the evaluator mostly finds its candidates compiled. One worker thread takes
// the requests in order; `Replace` drops what is still queued (the search moved on). A request
// that loses the race with the evaluation only compiles twice: cache writes are atomic.
//
// Meant for GPU devices, where compiling runs on otherwise idle host cores. On a CPU device the
// compiler would compete with the kernels being timed.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "eval/executor.hpp"

namespace kf {

class CompileAhead {
 public:
  // `options` as for the evaluating executor; its baseline_ms should be set (nothing is timed).
  explicit CompileAhead(ExecutorOptions options);
  ~CompileAhead();
  CompileAhead(const CompileAhead&) = delete;
  CompileAhead& operator=(const CompileAhead&) = delete;

  // Queues these candidates in place of whatever is still waiting.
  void Replace(std::vector<std::pair<Kernel, Config>> candidates);
  int compiled() const;  // candidates compiled ahead so far (including failures to compile)

 private:
  void Work();

  ExecutorOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<Kernel, Config>> queue_;
  bool stop_ = false;
  int compiled_ = 0;
  std::thread worker_;
};

}  // namespace kf
