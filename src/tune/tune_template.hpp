#pragma once
// Tuning one template, ask/tell: its parameter space (the @param lists, the @constraint
// expressions against the device's properties and the benchmark sizes), narrowed and ordered by
// the hardware rules; the template's default and the rules' tried-first points measured first,
// then the strategy. A kernel without parameters is one configuration. A TuningFeed
// (tune/tuning_feed.hpp) feeds one through a judge.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluation.hpp"
#include "core/kernel.hpp"
#include "host/judge.hpp"
#include "tune/rules.hpp"
#include "tune/session.hpp"
#include "tune/transfer.hpp"

namespace kf {

// What a tuner learns from a verdict: the median time of an `ok` one, else the status as the
// failure.
Measurement MeasurementOf(const Evaluation& ev);

// An earlier tuning of another kernel with the same parameters (in a search: a kernel a mutation
// came from, or a sibling): its configurations and what they measured. The tuner ranks its
// space's points by how they fared there (tune/transfer.hpp) and measures the best first.
struct TuneSource {
  Kernel kernel;
  std::map<Config, Measurement> records;
};

struct TuneSettings {
  Env device_env;       // device properties and benchmark sizes, for constraints
  RuleContext context;  // op class and device; the kernel's part is filled here
  const std::vector<Rule>* rules = nullptr;  // none: the whole space
  std::string strategy;                      // "" = the default
  TuneBudget budget;
  uint64_t seed = 1;
  std::vector<TuneSource> sources;  // a prior; sources with other parameters are left out
};

class TuneTemplate {
 public:
  // Throws InputError when the parameter space is invalid or has no valid configuration.
  TuneTemplate(const Kernel& kernel, const TuneSettings& settings);
  TuneTemplate(const TuneTemplate&) = delete;
  TuneTemplate& operator=(const TuneTemplate&) = delete;

  // Up to n configurations to measure next; fewer or none while results are pending or when done.
  std::vector<Config> Ask(int n);
  // A verdict's measurement for `config` (asked or not: a resumed run tells what its store holds).
  void Tell(const Config& config, const Measurement& m);
  // Nothing more will be asked and nothing is pending.
  bool Done() const;
  int pending() const;
  int evaluations() const;

  const SearchSpace* space() const { return space_.get(); }  // null without parameters
  const TuningSession* session() const { return session_.get(); }
  const std::vector<std::string>& rules_applied() const { return applied_; }
  const std::vector<std::string>& hints() const { return hints_; }
  const TransferPrior* prior() const { return prior_.get(); }  // null without a usable source

 private:
  Config defaults_;
  std::unique_ptr<SearchSpace> space_;
  std::unique_ptr<TransferPrior> prior_;  // over space_
  std::unique_ptr<TuningSession> session_;
  std::vector<std::string> applied_, hints_;
  // A kernel without parameters: one configuration, asked once.
  bool single_asked_ = false, single_told_ = false;
};

}  // namespace kf
