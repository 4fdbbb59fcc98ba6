#include "tune/tune_template.hpp"

#include <algorithm>

#include "core/input_error.hpp"
#include "tune/strategy.hpp"

namespace kf {

Measurement MeasurementOf(const Evaluation& ev) {
  Measurement m;
  m.ok = ev.status == Status::kOk && ev.time.has_value();
  m.time_ms = m.ok ? ev.time->median_ms : 0;
  if (!m.ok) m.failure = std::string(StatusName(ev.status));
  return m;
}

TuneTemplate::TuneTemplate(const Kernel& kernel, const TuneSettings& settings)
    : defaults_(kernel.ResolveConfig({})) {
  if (kernel.params.empty()) return;
  SearchSpace whole = SearchSpace::FromKernel(kernel, settings.device_env);
  if (whole.size() == 0)
    throw InputError(kernel.path, 0, "@constraint",
                     "no configuration of the @param lists satisfies the constraints");
  RuleContext context = settings.context;
  context.source = kernel.source;
  context.defaults = defaults_;
  std::vector<Point> try_first;
  if (settings.rules) {
    RuledSpace ruled = ApplyRules(*settings.rules, context, whole);
    space_ = std::make_unique<SearchSpace>(std::move(ruled.space));
    applied_ = std::move(ruled.applied);
    hints_ = std::move(ruled.hints);
    try_first = std::move(ruled.try_first);
  } else {
    space_ = std::make_unique<SearchSpace>(std::move(whole));
  }
  session_ = std::make_unique<TuningSession>(
      *space_, settings.budget,
      MakeStrategy(settings.strategy.empty() ? kDefaultStrategy : settings.strategy),
      settings.seed);
  std::vector<Point> first =
      StartingPoints(*space_, defaults_, try_first, settings.budget.evaluations);
  prior_ = std::make_unique<TransferPrior>(*space_);
  for (const TuneSource& source : settings.sources) {
    SearchSpace theirs = SearchSpace::FromKernel(source.kernel, settings.device_env);
    std::map<Point, Measurement> records;
    for (const auto& [config, m] : source.records)
      if (std::optional<Point> p = theirs.FromConfig(config)) records[*p] = m;
    prior_->Add(theirs, records);
  }
  if (prior_->empty()) {
    prior_.reset();
  } else {  // what won where these parameters were tuned before is measured first
    session_->SetPrior(prior_.get());
    for (const Point& p : prior_->Best(1)) {
      if (!space_->IsValid(p)) continue;
      first.erase(std::remove(first.begin(), first.end(), p), first.end());
      first.insert(first.begin(), p);
    }
  }
  session_->MeasureFirst(first);
}

std::vector<Config> TuneTemplate::Ask(int n) {
  std::vector<Config> out;
  if (n <= 0) return out;
  if (!session_) {
    if (!single_asked_) {
      single_asked_ = true;
      out.push_back(defaults_);
    }
    return out;
  }
  for (const Point& p : session_->Ask(n)) out.push_back(space_->ToConfig(p));
  return out;
}

void TuneTemplate::Tell(const Config& config, const Measurement& m) {
  if (!session_) {
    single_asked_ = single_told_ = true;
    return;
  }
  if (std::optional<Point> p = space_->FromConfig(config)) session_->Tell(*p, m);
}

bool TuneTemplate::Done() const {
  return session_ ? session_->Done() : single_told_;
}

int TuneTemplate::pending() const {
  if (!session_) return single_asked_ && !single_told_ ? 1 : 0;
  return session_->pending();
}

int TuneTemplate::evaluations() const {
  return session_ ? session_->evaluations() : (single_told_ ? 1 : 0);
}

}  // namespace kf
