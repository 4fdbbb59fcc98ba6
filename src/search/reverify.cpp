#include "search/reverify.hpp"

#include <algorithm>
#include <future>

#include "core/identity.hpp"

namespace kf {

int Reverify(const Archive& archive, Judge& judge, Store& store, const ReverifySettings& s) {
  std::vector<const Elite*> elites;
  for (const auto& [cell, e] : archive.cells()) elites.push_back(&e);
  std::stable_sort(elites.begin(), elites.end(),
                   [](const Elite* x, const Elite* y) { return x->speedup > y->speedup; });
  if (static_cast<int>(elites.size()) > s.top) elites.resize(static_cast<size_t>(s.top));

  struct Job {
    const Elite* elite;
    std::string key;
    std::future<JudgeResult> verdict;
  };
  std::vector<Job> jobs;
  for (const Elite* e : elites) {
    for (int r = 0; r < s.repeats; ++r) {
      nlohmann::json key_settings = s.eval_settings;
      key_settings["run"] = s.run;
      key_settings["final"] = r;
      std::string key =
          EvaluationKey(CandidateId(e->kernel_id, e->config), s.devices, key_settings);
      if (store.FindEvaluation(key)) continue;
      auto promise = std::make_shared<std::promise<JudgeResult>>();
      jobs.push_back({e, key, promise->get_future()});
      judge.Submit(
          {e->kernel, e->config, EvalSettings::Thorough(), key},
          [promise](JudgeResult result) { promise->set_value(std::move(result)); }, s.runner);
    }
  }
  // Stored in the order submitted, as each comes back.
  for (Job& job : jobs) {
    JudgeResult r = job.verdict.get();
    if (!r.tool_error.empty()) throw std::runtime_error(r.tool_error);
    r.evaluation.descriptor = job.elite->cell;
    store.PutEvaluation(s.run, job.elite->kernel, job.elite->config, job.key, r.evaluation,
                        {-1, "final"});
  }
  return static_cast<int>(jobs.size());
}

}  // namespace kf
