#include "search/search_loop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "core/codec.hpp"
#include "core/identity.hpp"
#include "core/input_error.hpp"
#include "search/run_summary.hpp"
#include "tune/strategy.hpp"
#include "tune/tune_template.hpp"
#include "tune/tuning_feed.hpp"

namespace kf {

uint64_t ProposalSeed(uint64_t run_seed, int index, uint64_t salt) {
  // SplitMix64 of the run's seed, the index and the salt: streams that do not overlap.
  uint64_t z = run_seed + 0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(index) + 1) +
               0xbf58476d1ce4e5b9ull * salt;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kTuneSalt = 1;

// Writes every verdict and every change of a proposal's state. Verdicts that arrive together (a
// batch of the judge's events) are written in one transaction at the batch's end, or sooner when
// anything that refers to them is written or read: a proposal's state, an archive cell, a read
// of the run's evaluations. So what the store holds is always in the order it happened, and a
// killed run loses at most the verdicts of the batch it was in, which a resumed run judges again.
class StoreWriter : public SearchCallback {
 public:
  StoreWriter(Store& store, const SearchSettings& s) : store_(store), s_(s) {}
  void OnEvaluation(const SearchEvaluation& e) override {
    if (e.from_store) return;
    pending_.push_back({e.kernel, e.config, e.key, e.evaluation, {e.proposal, "search"}});
    if (!batching_) Flush();
  }
  void OnProposal(const ProposalRecord& r) override {
    Flush();
    store_.PutProposal(s_.run, r);
  }
  void BeginBatch() { batching_ = true; }
  void EndBatch() {
    batching_ = false;
    Flush();
  }
  void Flush() {
    if (pending_.empty()) return;
    store_.PutEvaluations(s_.run, pending_);
    pending_.clear();
  }

 private:
  Store& store_;
  const SearchSettings& s_;
  std::vector<EvaluationWrite> pending_;
  bool batching_ = false;
};

// A proposal's line in the run's events once it is done.
class EventWriter : public SearchCallback {
 public:
  EventWriter(Store& store, std::string run) : store_(store), run_(std::move(run)) {}
  void OnProposal(const ProposalRecord& r) override {
    if (!r.Final()) return;
    store_.AddEvent(run_, "proposal", ProposalLine(r));
  }

 private:
  Store& store_;
  std::string run_;
};

// A proposal the search made itself: deeper tuning of an elite, once the proposer has nothing new.
constexpr char kDeepen[] = "deepen";
bool IsDeepening(const ProposalRecord& r) {
  return r.request.value("by", "") == kDeepen;
}

struct Active {
  int index = 0;
  ProposalRecord record;
  bool deepening = false;  // the search's own proposal: more of an elite's space
  bool unparented = false;
  bool awaiting_proposer = false;
  std::optional<Proposal> proposal;
  std::string kernel_id;
  std::unique_ptr<TuneTemplate> tuning;
  std::unique_ptr<TuningFeed> feed;  // of `tuning`: verdicts told in the order it asked
  std::optional<SearchEvaluation> best;
  int evaluations = 0;
  Grade grade = Grade::kNothing;  // the furthest any of its candidates got
  std::string failure;            // the first failed verdict's status and reason
  nlohmann::json trail;           // what the proposer did (ProposalOutcome::trail)
};

struct Event {
  int index = 0;
  bool is_proposal = false;
  ProposalOutcome outcome;  // a proposer's reply
  int seq = 0;              // a verdict: its place in its proposal's asking order
  Config config;
  JudgeResult result;
};

class Scheduler {
 public:
  Scheduler(const Task& task, Proposer& proposer, Judge& judge, Store& store,
            const DescriptorSpace& descriptors, const SearchSettings& s,
            const std::vector<SearchCallback*>& user)
      : task_(task),
        proposer_(proposer),
        judge_(judge),
        store_(store),
        descriptors_(descriptors),
        s_(s),
        writer_(store, s),
        events_(store, s.run),
        start_(Clock::now()),
        baseline_kernel_(task.baseline.count(s.device.language()) > 0 ||
                         task.torch_reference.empty()) {
    callbacks_ = {&writer_, &events_};
    callbacks_.insert(callbacks_.end(), user.begin(), user.end());
    tune_.device_env = s.device_env;
    tune_.context = s.rule_context;
    tune_.rules = &s.rules;
    tune_.strategy = s.policy.strategy;
    if (!s.policy.strategy.empty() && !MakeStrategy(s.policy.strategy))
      throw InputError("--strategy", 0, s.policy.strategy, "unknown strategy");
    std::optional<Selection> selection = SelectionByName(s.policy.selection);
    if (!selection) throw InputError("--selection", 0, s.policy.selection, "unknown selection");
    selection_ = *selection;
  }

  ~Scheduler() { StopWorkers(); }

  SearchResult Run();

 private:
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool OutOfTime() const { return s_.policy.seconds > 0 && Elapsed() >= s_.policy.seconds; }
  bool BudgetIssued() const { return issued_ >= s_.policy.budget; }
  // With no baseline kernel to seed the archive (a PyTorch reference's eager time is the time to
  // beat): while the archive is empty, a proposer that writes kernels from the task alone is
  // asked without a parent.
  bool FromScratch() const {
    return !baseline_kernel_ && archive_.empty() && proposer_.WritesFromScratch();
  }

  void Restore();
  void StartBaseline();
  void Issue();
  void IssueOne(bool unparented);
  bool ProposerDry() const;
  const Elite* NextToDeepen() const;
  bool IssueDeepening();
  void PrimeWithStored(Active& a, TuneSettings& settings);
  ProposalRequest MakeRequest(int index, bool unparented);
  void Feed();
  void Handle(Event e);
  void Accept(Active& a, const Proposal& p);
  void OnVerdict(Active& a, int seq, const Config& config, JudgeResult r, bool from_store);
  void Stop();
  void MaybeComplete(Active& a);
  void Complete(Active& a);
  void Finish(Active& a, ProposalState state, nlohmann::json outcome);
  std::string KeyOf(const std::string& kernel_id, const Config& config) const;
  void Learn(const std::string& kernel_id, const Kernel& kernel, const Config& config,
             const Evaluation& ev);
  std::vector<TuneSource> SourcesFor(const std::string& kernel_id, const Kernel& kernel) const;
  void Progress();
  std::string StopReason() const;

  void Post(Event e) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(e));
    }
    wake_.notify_all();
  }
  void ProposerWork();
  void StopWorkers();

  const Task& task_;
  Proposer& proposer_;
  Judge& judge_;
  Store& store_;
  const DescriptorSpace& descriptors_;
  const SearchSettings& s_;
  Selection selection_ = Selection::kUniform;
  TuneSettings tune_;
  StoreWriter writer_;
  EventWriter events_;
  std::vector<SearchCallback*> callbacks_;
  Clock::time_point start_;
  // Whether the search starts from the task's baseline kernel; false where the task has none
  // for the device's language and a PyTorch reference stands for it: templates and the
  // proposer seed the archive.
  const bool baseline_kernel_;

  Archive archive_;
  BestByKernel best_by_kernel_;              // every finished kernel's best, elite or not
  std::map<std::string, TuneSource> tuned_;  // by kernel id: what its configurations measured
  std::map<int, std::unique_ptr<Active>> active_;
  std::set<std::string> kernel_ids_;  // kernels proposed in this run
  int next_index_ = 0;
  int issued_ = 0;          // evaluations of the run: stored, and submitted to the judge
  int judge_pending_ = 0;   // submitted and not back
  int unparented_out_ = 0;  // requests without a parent awaiting the proposer
  int consecutive_empty_ = 0;
  // Deeper tuning, by kernel id: rounds given, the last round's gain, and whether its space is
  // spent (nothing left to ask).
  struct Deepened {
    int rounds = 0;
    double last_gain = 0;
    bool exhausted = false;
  };
  std::map<std::string, Deepened> deepened_;
  bool stopping_ = false;
  std::string tool_error_;
  SearchResult result_;

  // Events from the proposer workers and the judge's threads.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Event> queue_;
  std::deque<ProposalRequest> requests_;
  bool workers_stop_ = false;
  std::vector<std::thread> workers_;
};

std::string Scheduler::KeyOf(const std::string& kernel_id, const Config& config) const {
  nlohmann::json key_settings = s_.eval_settings;
  key_settings["run"] = s_.run;  // every run measures its own candidates
  return EvaluationKey(CandidateId(kernel_id, config), s_.devices, key_settings);
}

void Scheduler::Learn(const std::string& kernel_id, const Kernel& kernel, const Config& config,
                      const Evaluation& ev) {
  if (kernel.params.empty()) return;
  auto it = tuned_.find(kernel_id);
  if (it == tuned_.end()) it = tuned_.emplace(kernel_id, TuneSource{kernel, {}}).first;
  it->second.records[config] = MeasurementOf(ev);
}

// The run's other kernels with the same parameters (a parent and its mutations, siblings), those
// with the most measurements first, a few at most: the new kernel's tuner starts from what won
// there.
std::vector<TuneSource> Scheduler::SourcesFor(const std::string& kernel_id,
                                              const Kernel& kernel) const {
  constexpr size_t kSources = 4;
  auto names = [](const Kernel& k) {
    std::set<std::string> n;
    for (const auto& p : k.params) n.insert(p.name);
    return n;
  };
  const std::set<std::string> mine = names(kernel);
  std::vector<const TuneSource*> same;
  for (const auto& [id, source] : tuned_)
    if (id != kernel_id && names(source.kernel) == mine) same.push_back(&source);
  std::stable_sort(same.begin(), same.end(), [](const TuneSource* a, const TuneSource* b) {
    return a->records.size() > b->records.size();
  });
  std::vector<TuneSource> out;
  for (size_t i = 0; i < same.size() && i < kSources; ++i) out.push_back(*same[i]);
  return out;
}

SearchResult Scheduler::Run() {
  for (int i = 0; i < std::max(1, s_.policy.in_flight); ++i)
    workers_.emplace_back([this] { ProposerWork(); });
  Restore();
  if (!active_.count(0) && next_index_ == 0 && baseline_kernel_) StartBaseline();
  for (;;) {
    if (!tool_error_.empty() || OutOfTime()) Stop();
    if (!stopping_) Issue();
    Feed();
    if (judge_pending_ == 0) {
      std::string reason = StopReason();
      if (!reason.empty()) {
        result_.stop_reason = reason;
        break;
      }
    }
    Progress();
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(250), [&] { return !queue_.empty(); });
    std::deque<Event> events;
    events.swap(queue_);
    lock.unlock();
    writer_.BeginBatch();
    for (Event& e : events) Handle(std::move(e));
    writer_.EndBatch();
  }
  // Proposals still waiting for the proposer are given up: a resumed run asks again only for
  // those of a run that was killed, not of one that ended.
  std::vector<int> waiting;
  for (const auto& [index, a] : active_)
    if (a->awaiting_proposer && tool_error_.empty()) waiting.push_back(index);
  for (int index : waiting)
    Finish(*active_.at(index), ProposalState::kAbandoned,
           {{"reason", "the search ended first: " + result_.stop_reason}});
  StopWorkers();
  if (!tool_error_.empty()) throw std::runtime_error(tool_error_);
  Progress();
  result_.archive = archive_;
  result_.evaluations = issued_;
  result_.proposals = next_index_;
  result_.seconds = Elapsed();
  return result_;
}

// Nothing more is asked; candidates not yet running are dropped rather than waited for.
void Scheduler::Stop() {
  if (stopping_) return;
  stopping_ = true;
  judge_.CancelPending();
}

std::string Scheduler::StopReason() const {
  if (!tool_error_.empty()) return "the tool failed";
  bool working = false;  // a proposal that may still ask for candidates, or awaits its proposer
  for (const auto& [index, a] : active_) working = working || a->awaiting_proposer || a->tuning;
  if (BudgetIssued()) return "budget spent";
  if (OutOfTime()) return "time budget spent";
  if (working) return "";
  if (ProposerDry() && !NextToDeepen()) {
    std::string why = proposer_.Exhausted();
    if (why.empty()) why = "the proposer had nothing new for any parent";
    return "nothing left to try: " + why + ", and every correct kernel's space is tuned through";
  }
  if (archive_.empty() && proposer_.UnparentedLeft() == 0 && !FromScratch())
    return baseline_kernel_ ? "no correct configuration of the baseline or any template to build on"
                            : "no correct configuration of any template to build on";
  return "";
}

void Scheduler::Progress() {
  SearchProgress p;
  p.evaluations = issued_ - judge_pending_;
  p.budget = s_.policy.budget;
  p.judged_now = result_.judged_now;
  p.proposals = next_index_;
  p.proposals_out = static_cast<int>(active_.size());
  p.candidates_out = judge_pending_;
  p.cells = static_cast<int>(archive_.cells().size());
  if (const Elite* b = archive_.Best()) p.best_speedup = b->speedup;
  p.seconds = Elapsed();
  for (SearchCallback* c : callbacks_) c->OnProgress(p);
}

void Scheduler::ProposerWork() {
  for (;;) {
    ProposalRequest request;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return workers_stop_ || !requests_.empty(); });
      if (workers_stop_) return;
      request = std::move(requests_.front());
      requests_.pop_front();
    }
    Event e;
    e.index = request.index;
    e.is_proposal = true;
    try {
      e.outcome = proposer_.Propose(request);
    } catch (const std::exception& ex) {  // never across the thread: a bad reply with its reason
      e.outcome = ProposalOutcome::BadReply(ex.what());
    }
    Post(std::move(e));
  }
}

void Scheduler::StopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    workers_stop_ = true;
    requests_.clear();
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void Scheduler::Restore() {
  std::vector<ProposalRecord> records = store_.RunProposals(s_.run);
  std::vector<StoredEvaluation> stored = store_.RunEvaluations(s_.run);
  for (const StoredEvaluation& e : stored) issued_ += e.purpose == "search";
  std::map<int, const Kernel*> kernel_of;  // by proposal
  for (const ProposalRecord& r : records)
    if (r.proposal) kernel_of[r.index] = &r.proposal->kernel;
  for (const StoredEvaluation& e : stored) {
    auto k = kernel_of.find(e.proposal);
    if (e.purpose == "search" && k != kernel_of.end())
      Learn(e.kernel_id, *k->second, e.config, e.evaluation);
  }
  RestoredArchive restored = RebuildArchive(records, stored);
  archive_ = std::move(restored.archive);
  best_by_kernel_ = std::move(restored.best_by_kernel);
  for (const ProposalRecord& r : records) {
    next_index_ = std::max(next_index_, r.index + 1);
    if (r.proposal) kernel_ids_.insert(KernelId(r.proposal->kernel));
    if (r.index > 0 && !IsDeepening(r)) {
      proposer_.Observe(r);
      // The proposals in a row that gave nothing, as the run left them (in asking order, exact
      // with one in flight): a dry proposer is not asked its 25 again before deeper tuning.
      if (r.state == ProposalState::kNothingNew || r.state == ProposalState::kBadReply)
        ++consecutive_empty_;
      else if (r.proposal)
        consecutive_empty_ = 0;
    }
    if (IsDeepening(r) && r.Final() && r.proposal) {  // deeper tuning given so far, in order
      Deepened& d = deepened_[KernelId(r.proposal->kernel)];
      ++d.rounds;
      d.last_gain = r.outcome.value("gain", 0.0);
      d.exhausted = d.exhausted || r.outcome.value("evaluations", 0) == 0 ||
                    r.outcome.value("space_spent", false);
    }
  }
  // The proposer's credit, told again in the order the proposals finished.
  std::vector<const ProposalRecord*> finished;
  for (const ProposalRecord& r : records)
    if (r.index > 0 && !IsDeepening(r) && r.Final() && r.outcome.contains("grade"))
      finished.push_back(&r);
  std::sort(finished.begin(), finished.end(), [](const ProposalRecord* a, const ProposalRecord* b) {
    return a->done_seq < b->done_seq;
  });
  for (const ProposalRecord* r : finished) proposer_.Credit(*r);
  for (const ProposalRecord& r : records) {
    if (r.state ==
        ProposalState::kIssued) {  // the proposer was asked when the run was killed: ask again
      auto a = std::make_unique<Active>();
      a->index = r.index;
      a->record = r;
      a->unparented = r.request.contains("parent") && r.request["parent"].is_null();
      a->awaiting_proposer = true;
      if (a->unparented) ++unparented_out_;
      ProposalRequest request = MakeRequest(r.index, a->unparented);
      active_[r.index] = std::move(a);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back(std::move(request));
      }
      wake_.notify_all();
    } else if (r.state == ProposalState::kProposed && r.proposal) {  // being tuned: go on tuning it
      auto a = std::make_unique<Active>();
      a->index = r.index;
      a->record = r;
      a->deepening = IsDeepening(r);
      a->trail = r.outcome.value("proposer", nlohmann::json::object());
      active_[r.index] = std::move(a);
      Accept(*active_[r.index], *r.proposal);
    }
  }
}

void Scheduler::StartBaseline() {
  auto baseline = task_.baseline.find(s_.device.language());
  if (baseline == task_.baseline.end())
    throw InputError(task_.dir + "/task.toml", 0, "kernels.baseline",
                     "no baseline for " + std::string(LanguageName(s_.device.language())));
  Proposal p;
  p.kernel = LoadKernelFile(task_.PathOf(baseline->second));
  p.origin = "baseline " + baseline->second;
  auto a = std::make_unique<Active>();
  a->index = next_index_++;
  a->record.index = a->index;
  a->record.request = {{"by", "baseline"}, {"parent", nullptr}};
  Active& ref = *a;
  active_[a->index] = std::move(a);
  Accept(ref, p);
}

ProposalRequest Scheduler::MakeRequest(int index, bool unparented) {
  ProposalRequest r;
  r.index = index;
  r.seed = ProposalSeed(s_.policy.seed, index);
  r.task_id = task_.id;
  r.language = s_.device.language();
  r.device = s_.device;
  r.peak_bandwidth_gbs = s_.peak_gbs;
  for (const auto& [cell, e] : archive_.cells()) r.filled_cells.push_back(cell);
  for (const Dimension& d : descriptors_.dimensions()) r.behaviour.emplace_back(d.name, d.levels);
  if (unparented) return r;
  std::mt19937_64 rng(r.seed);
  const Elite* parent = archive_.SelectParent(selection_, rng);
  if (!parent) return r;
  r.parent = *parent;
  if (const Elite* best = archive_.Best(); best && best->cell != parent->cell) r.best = *best;
  for (const Elite* e : archive_.Inspirations(parent, s_.policy.inspirations, rng))
    r.inspirations.push_back(*e);
  // The target: an empty cell next to the parent's (one level away in one dimension), else any
  // empty cell, else the weakest elite's.
  std::vector<Cell> near, empty;
  const auto& dims = descriptors_.dimensions();
  std::vector<int> sizes;
  for (const Dimension& d : dims) sizes.push_back(static_cast<int>(d.levels.size()));
  Cell c(sizes.size(), 0);
  for (int n = 0; n < descriptors_.CellCount(); ++n) {
    int rest = n;
    for (size_t d = sizes.size(); d-- > 0;) {
      c[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    if (archive_.cells().count(c)) continue;
    empty.push_back(c);
    int distance = 0;
    for (size_t d = 0; d < c.size() && d < parent->cell.size(); ++d)
      distance += std::abs(c[d] - parent->cell[d]);
    if (distance == 1) near.push_back(c);
  }
  const std::vector<Cell>& pool = near.empty() ? empty : near;
  TargetCell target;
  if (!pool.empty()) {
    target.cell = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
  } else {
    const Elite* weakest = nullptr;
    for (const auto& [cell, e] : archive_.cells())
      if (!weakest || e.speedup < weakest->speedup) weakest = &e;
    target.cell = weakest->cell;
    target.speedup = weakest->speedup;
  }
  target.description = descriptors_.Describe(target.cell);
  r.target = target;
  return r;
}

void Scheduler::Issue() {
  auto working = [&] {
    int n = 0;
    for (const auto& [index, a] : active_) n += a->awaiting_proposer || a->tuning != nullptr;
    return n;
  };
  while (working() < std::max(1, s_.policy.in_flight) && !BudgetIssued() &&
         consecutive_empty_ < s_.policy.max_empty_proposals && proposer_.Exhausted().empty()) {
    bool unparented = proposer_.UnparentedLeft() > unparented_out_ || FromScratch();
    if (!unparented && archive_.empty()) break;  // wait for a first kernel to seed the archive
    IssueOne(unparented);
  }
  // The proposer has nothing new: the budget goes to deeper tuning of the archive's elites.
  while (ProposerDry() && working() < std::max(1, s_.policy.in_flight) && !BudgetIssued() &&
         IssueDeepening()) {
  }
}

bool Scheduler::ProposerDry() const {
  return consecutive_empty_ >= s_.policy.max_empty_proposals || !proposer_.Exhausted().empty();
}

// The elite whose template most deserves more evaluations: a fast cell first, one whose last
// deeper tuning improved it doubly so, each round given to a kernel halving its claim; never a
// kernel being tuned now, one without parameters, or one whose space is spent. Once every elite's
// space is spent, the other correct kernels of the run get the same treatment from their best
// configuration: one that lost its cell by a noisy measurement, or whose tuning stopped short,
// may still hold the fastest configuration.
const Elite* Scheduler::NextToDeepen() const {
  std::set<std::string> busy;
  for (const auto& [index, a] : active_)
    if (a->tuning) busy.insert(a->kernel_id);
  const Elite* chosen = nullptr;
  double best = -1;
  auto consider = [&](const Elite& e) {
    if (e.kernel.params.empty() || busy.count(e.kernel_id)) return;
    auto d = deepened_.find(e.kernel_id);
    Deepened state = d == deepened_.end() ? Deepened{} : d->second;
    if (state.exhausted) return;
    double claim = e.speedup * (state.last_gain > 0 ? 2 : 1) / (1 << std::min(state.rounds, 20));
    if (claim > best) {
      best = claim;
      chosen = &e;
    }
  };
  for (const auto& [cell, e] : archive_.cells()) consider(e);
  if (chosen) return chosen;
  for (const auto& [kernel_id, e] : best_by_kernel_) consider(e);
  return chosen;
}

bool Scheduler::IssueDeepening() {
  const Elite* elite = NextToDeepen();
  if (!elite) return false;
  auto a = std::make_unique<Active>();
  a->index = next_index_++;
  a->deepening = true;
  a->record.index = a->index;
  a->record.state = ProposalState::kIssued;
  a->record.request = {
      {"by", kDeepen},
      {"seed", ProposalSeed(s_.policy.seed, a->index)},
      {"parent",
       {{"kernel_id", elite->kernel_id}, {"cell", elite->cell}, {"speedup", elite->speedup}}},
      {"inspirations", nlohmann::json::array()},
      {"target_cell", nullptr}};
  Proposal p;
  p.kernel = elite->kernel;
  const std::string prefix = "deeper tuning of ";
  p.origin = elite->origin.rfind(prefix, 0) == 0 ? elite->origin : prefix + elite->origin;
  p.parent_kernel_id = elite->kernel_id;
  p.parent_cell = elite->cell;
  p.mutations = elite->mutations;
  p.notes = "the proposer had nothing new: more of this kernel's parameter space";
  Active& ref = *a;
  active_[a->index] = std::move(a);
  Accept(ref, p);
  return true;
}

// A deeper tuning starts where its kernel's earlier tuning left off: every configuration of the
// kernel that other proposals of the run had judged is told to its tuner (none is asked again),
// and its budget is `tune_budget` more. Its own stored verdicts (a resumed run) are asked again
// and answered from the store, as any proposal's are, so a seed gives one order.
void Scheduler::PrimeWithStored(Active& a, TuneSettings& settings) {
  std::vector<StoredEvaluation> known;
  writer_.Flush();
  for (StoredEvaluation& e : store_.RunEvaluations(s_.run)) {
    if (e.purpose != "search" || e.kernel_id != a.kernel_id || e.proposal == a.index) continue;
    known.push_back(std::move(e));
  }
  settings.budget = {static_cast<int>(known.size()) + s_.policy.tune_budget, 0};
  a.tuning = std::make_unique<TuneTemplate>(a.proposal->kernel, settings);
  for (const StoredEvaluation& e : known) a.tuning->Tell(e.config, MeasurementOf(e.evaluation));
}

void Scheduler::IssueOne(bool unparented) {
  auto a = std::make_unique<Active>();
  a->index = next_index_++;
  a->unparented = unparented;
  a->awaiting_proposer = true;
  if (unparented) ++unparented_out_;
  ProposalRequest request = MakeRequest(a->index, unparented);
  a->record.index = a->index;
  a->record.state = ProposalState::kIssued;
  a->record.request = {
      {"by", proposer_.name()},
      {"seed", request.seed},
      {"parent", request.parent ? nlohmann::json{{"kernel_id", request.parent->kernel_id},
                                                 {"cell", request.parent->cell},
                                                 {"speedup", request.parent->speedup}}
                                : nlohmann::json(nullptr)},
      {"target_cell", request.target ? nlohmann::json{{"cell", request.target->cell},
                                                      {"description", request.target->description}}
                                     : nlohmann::json(nullptr)}};
  nlohmann::json inspirations = nlohmann::json::array();
  for (const Elite& e : request.inspirations) inspirations.push_back(e.kernel_id);
  a->record.request["inspirations"] = inspirations;
  for (SearchCallback* c : callbacks_) c->OnProposal(a->record);
  active_[a->index] = std::move(a);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(std::move(request));
  }
  wake_.notify_all();
}

void Scheduler::Accept(Active& a, const Proposal& p) {
  a.awaiting_proposer = false;
  a.proposal = p;
  a.kernel_id = KernelId(p.kernel);
  kernel_ids_.insert(a.kernel_id);
  TuneSettings settings = tune_;
  settings.budget = {s_.policy.tune_budget, 0};
  settings.seed = ProposalSeed(s_.policy.seed, a.index, kTuneSalt);
  if (!a.deepening) settings.sources = SourcesFor(a.kernel_id, p.kernel);
  try {
    if (a.deepening)
      PrimeWithStored(a, settings);
    else
      a.tuning = std::make_unique<TuneTemplate>(a.proposal->kernel, settings);
    a.feed = std::make_unique<TuningFeed>(*a.tuning);
  } catch (const std::exception& e) {
    a.record.proposal = p;
    Finish(a, ProposalState::kDone,
           {{"error", std::string("its parameter space is empty or invalid: ") + e.what()},
            {"evaluations", 0},
            {"grade", 0}});
    return;
  }
  if (a.record.state != ProposalState::kProposed) {
    a.record.state = ProposalState::kProposed;
    a.record.proposal = p;
    if (!a.trail.empty()) a.record.outcome = {{"proposer", a.trail}};
    for (SearchCallback* c : callbacks_) c->OnProposal(a.record);
  }
}

void Scheduler::Feed() {
  // Enough candidates out that every builder and every device has one and the next is ready.
  const int target = judge_.runner_count() * 2 + judge_.build_jobs();
  std::vector<int> order;
  for (const auto& [index, a] : active_) order.push_back(index);  // oldest proposals first
  for (int index : order) {
    auto it = active_.find(index);
    if (it == active_.end()) continue;
    Active& a = *it->second;
    if (!a.tuning) continue;
    while (!stopping_ && judge_pending_ < target && !BudgetIssued()) {
      std::optional<TuningFeed::Asked> asked = a.feed->Ask();
      if (!asked) break;
      const Config& config = asked->config;
      const int seq = asked->seq;
      std::string key = KeyOf(a.kernel_id, config);
      writer_.Flush();
      if (std::optional<Evaluation> stored = store_.FindEvaluation(key)) {
        JudgeResult r;
        r.evaluation = std::move(*stored);
        OnVerdict(a, seq, config, std::move(r), true);
        if (!active_.count(index)) break;
        continue;
      }
      ++issued_;
      ++judge_pending_;
      EvalSettings judging = s_.judging;
      if (a.proposal->parent_cell) {  // far slower than its parent: no need to time it to 1%
        auto parent = archive_.cells().find(*a.proposal->parent_cell);
        if (parent != archive_.cells().end()) judging.time_to_beat_ms = parent->second.time_ms;
      }
      Candidate candidate{a.proposal->kernel, config, judging, key};
      judge_.Submit(std::move(candidate), [this, index, seq, config](JudgeResult r) {
        Event e;
        e.index = index;
        e.seq = seq;
        e.config = config;
        e.result = std::move(r);
        Post(std::move(e));
      });
    }
    if (active_.count(index)) MaybeComplete(a);
  }
}

void Scheduler::Handle(Event e) {
  auto it = active_.find(e.index);
  if (e.is_proposal) {
    if (it == active_.end()) return;
    Active& a = *it->second;
    if (a.unparented) --unparented_out_;
    if (e.outcome.verdict == ProposalVerdict::kOk &&
        kernel_ids_.count(KernelId(e.outcome.proposal->kernel))) {
      nlohmann::json trail = std::move(e.outcome.trail);
      e.outcome = ProposalOutcome::NothingNew("the kernel was proposed before in this run");
      e.outcome.trail = std::move(trail);
    }
    ++result_.proposal_verdicts[std::string(ProposalVerdictName(e.outcome.verdict))];
    a.trail = std::move(e.outcome.trail);
    if (e.outcome.verdict != ProposalVerdict::kOk) {
      ++consecutive_empty_;
      a.awaiting_proposer = false;
      Finish(a,
             e.outcome.verdict == ProposalVerdict::kBadReply ? ProposalState::kBadReply
                                                             : ProposalState::kNothingNew,
             {{"reason", e.outcome.reason}, {"evaluations", 0}, {"grade", 0}});
      return;
    }
    consecutive_empty_ = 0;
    Accept(a, *e.outcome.proposal);
    return;
  }
  --judge_pending_;
  if (e.result.cancelled) {  // never ran: not a verdict, not charged
    --issued_;
    if (it == active_.end()) return;
    Active& a = *it->second;
    a.feed->Arrived(e.seq, e.config, std::nullopt);
    MaybeComplete(a);
    return;
  }
  if (!e.result.tool_error.empty()) {
    if (tool_error_.empty()) tool_error_ = e.result.tool_error;
    return;  // nothing more is completed: the store holds the run as a kill would leave it
  }
  if (it == active_.end()) return;
  OnVerdict(*it->second, e.seq, e.config, std::move(e.result), false);
}

void Scheduler::OnVerdict(Active& a, int seq, const Config& config, JudgeResult r,
                          bool from_store) {
  Evaluation& ev = r.evaluation;
  // Classification is a stage of the loop: from the artifact's listing where there is one.
  if (!from_store && ev.status != Status::kCompileError && ev.status != Status::kInvalidConfig)
    ev.descriptor = descriptors_.Classify(a.proposal->kernel.language, a.proposal->kernel.source,
                                          r.listing, config);
  SearchEvaluation e{a.index,
                     a.proposal->kernel,
                     a.kernel_id,
                     a.proposal->origin,
                     KeyOf(a.kernel_id, config),
                     config,
                     ev,
                     from_store};
  for (SearchCallback* c : callbacks_) c->OnEvaluation(e);
  if (from_store) {
    ++result_.from_store;
  } else {
    ++result_.judged_now;
    ++result_.verdicts[std::string(StatusName(ev.status))];
  }
  ++a.evaluations;
  Learn(a.kernel_id, a.proposal->kernel, config, ev);
  if (ev.status != Status::kOk && a.failure.empty())
    a.failure = fmt::format("{}: {}", StatusName(ev.status), ev.reason.substr(0, 400));
  a.grade =
      std::max(a.grade, ev.status == Status::kOk ? Grade::kCorrect
                        : ev.status == Status::kCompileError || ev.status == Status::kInvalidConfig
                            ? Grade::kCompileError
                            : Grade::kIncorrect);
  if (ev.status == Status::kOk && !ev.descriptor.empty() &&
      (!a.best || ev.speedup.value_or(0) > a.best->evaluation.speedup.value_or(0)))
    a.best = e;
  a.feed->Arrived(seq, config, std::move(r));
  MaybeComplete(a);
}

void Scheduler::MaybeComplete(Active& a) {
  // After a tool failure nothing is completed: the store holds the run as a kill would leave it.
  if (!a.tuning || !a.feed->Settled() || !tool_error_.empty()) return;
  if (a.tuning->Done() || BudgetIssued() || stopping_) Complete(a);
}

void Scheduler::Complete(Active& a) {
  std::optional<std::pair<Config, Evaluation>> best;
  if (a.best) best = std::make_pair(a.best->config, a.best->evaluation);
  // What it had to beat: its cell's elite (else its parent) and the run's best.
  double run_best = archive_.Best() ? archive_.Best()->speedup : 0, before = 0;
  if (a.best) {
    if (auto it = archive_.cells().find(a.best->evaluation.descriptor);
        it != archive_.cells().end())
      before = it->second.speedup;
  }
  if (before == 0 && a.proposal->parent_cell) {
    if (auto it = archive_.cells().find(*a.proposal->parent_cell); it != archive_.cells().end())
      before = it->second.speedup;
  }
  ArchiveOffer offer = OfferToArchive(archive_, *a.proposal, a.kernel_id, best);
  if (offer.elite) KeepIfBetter(best_by_kernel_, *offer.elite);
  Grade grade = a.grade;
  if (offer.improved)
    grade = offer.elite->speedup > run_best ? Grade::kNewBest : Grade::kImprovedCell;
  nlohmann::json outcome = {{"evaluations", a.evaluations},
                            {"improved_archive", offer.improved},
                            {"grade", static_cast<int>(grade)}};
  if (offer.improved && before > 0) outcome["gain"] = offer.elite->speedup / before - 1;
  if (grade < Grade::kCorrect && !a.failure.empty()) outcome["failure"] = a.failure;
  if (offer.elite) {
    const Elite& e = *offer.elite;
    writer_.Flush();  // the cell refers to the candidate
    store_.OfferArchiveCell(s_.run, {e.cell, CandidateId(e.kernel_id, e.config), e.speedup});
    outcome["cell"] = e.cell;
    outcome["speedup"] = e.speedup;
    outcome["config"] = ConfigToJson(e.config);
    outcome["device"] = e.device;
  }
  if (a.proposal->parent_cell) outcome["beat_parent"] = offer.beat_parent;
  if (a.deepening) {
    Deepened& d = deepened_[a.kernel_id];
    ++d.rounds;
    d.last_gain = outcome.value("gain", 0.0);
    const TuningSession* session = a.tuning->session();
    d.exhausted = a.evaluations == 0 || !session ||
                  session->evaluations() >= static_cast<int>(a.tuning->space()->size());
    outcome["space_spent"] = d.exhausted;  // so a resumed run does not ask for more of it
  }
  Finish(a, ProposalState::kDone, outcome);
}

void Scheduler::Finish(Active& a, ProposalState state, nlohmann::json outcome) {
  a.record.state = state;
  a.record.outcome = std::move(outcome);
  if (!a.trail.empty()) a.record.outcome["proposer"] = a.trail;
  if (a.proposal) a.record.proposal = a.proposal;
  for (SearchCallback* c : callbacks_) c->OnProposal(a.record);
  if (a.index > 0 && !a.deepening && a.record.outcome.contains("grade")) proposer_.Credit(a.record);
  active_.erase(a.index);  // `a` is gone after this
}

}  // namespace

SearchResult RunSearch(const Task& task, Proposer& proposer, Judge& judge, Store& store,
                       const DescriptorSpace& descriptors, const SearchSettings& settings,
                       const std::vector<SearchCallback*>& callbacks) {
  Scheduler scheduler(task, proposer, judge, store, descriptors, settings, callbacks);
  return scheduler.Run();
}

}  // namespace kf
