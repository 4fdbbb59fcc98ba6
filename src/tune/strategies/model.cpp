// Model-based search: a random forest fitted to every measurement so far predicts log(time) with
// a spread (the disagreement of its trees), and the next points are the unseen ones with the
// highest expected improvement over the best: with n measurements, a batch of the n/16 best is
// handed out before the next fit (they need no results in between, so they can be in flight
// together). Failures enter the model as slower than anything seen, so the search learns where
// configurations fail. A few points start it (8, or a quarter of a smaller budget): with a prior
// (tune/transfer.hpp: earlier tunings of the same kind) up to three of the configurations it
// ranks best, then a maximin design (each point the farthest from all others of a few random
// valid ones), which reaches the ends of every value list, where GPU optima often sit. The
// prior's rank is also a feature of the forest, so it learns how far this device follows the
// earlier ones. Two guards against a surrogate that is confidently wrong (it then keeps refining
// one region and never tries the value that matters): after each batch is measured, one
// neighbour of the best point that changes the next parameter in turn, so every parameter is
// varied around the incumbent; and, as SMAC interleaves random configurations, one pick in five
// is a random unseen point.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "tune/strategies/strategies.hpp"
#include "tune/transfer.hpp"

namespace kf {

namespace {

struct Node {
  int feature = -1;  // -1: leaf
  double threshold = 0, value = 0;
  int left = -1, right = -1;
};

class Tree {
 public:
  void Fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
           std::vector<int> rows, std::mt19937_64& rng) {
    nodes_.clear();
    Build(x, y, rows, 0, rng);
  }

  double Predict(const std::vector<double>& f) const {
    int n = 0;
    while (nodes_[static_cast<size_t>(n)].feature >= 0) {
      const Node& node = nodes_[static_cast<size_t>(n)];
      n = f[static_cast<size_t>(node.feature)] <= node.threshold ? node.left : node.right;
    }
    return nodes_[static_cast<size_t>(n)].value;
  }

 private:
  int Build(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
            std::vector<int>& rows, int depth, std::mt19937_64& rng) {
    int id = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
    double mean = 0;
    for (int r : rows) mean += y[static_cast<size_t>(r)];
    mean /= static_cast<double>(rows.size());
    nodes_[static_cast<size_t>(id)].value = mean;
    if (rows.size() < 4 || depth >= 14) return id;

    const size_t features = x[0].size();
    const size_t tries = std::max<size_t>(1, (features + 1) * 2 / 3);
    double best_score = 0;
    int best_feature = -1;
    double best_threshold = 0;
    std::vector<std::pair<double, double>> column(rows.size());
    for (size_t t = 0; t < tries; ++t) {
      size_t f = std::uniform_int_distribution<size_t>(0, features - 1)(rng);
      for (size_t i = 0; i < rows.size(); ++i) {
        column[i] = {x[static_cast<size_t>(rows[i])][f], y[static_cast<size_t>(rows[i])]};
      }
      std::sort(column.begin(), column.end());
      double total = 0, total_sq = 0;
      for (const auto& [v, target] : column) {
        total += target;
        total_sq += target * target;
      }
      double left = 0, left_sq = 0;
      const double n = static_cast<double>(column.size());
      for (size_t i = 0; i + 1 < column.size(); ++i) {
        left += column[i].second;
        left_sq += column[i].second * column[i].second;
        if (column[i].first == column[i + 1].first) continue;
        double nl = static_cast<double>(i + 1), nr = n - nl;
        double sse = (left_sq - left * left / nl) +
                     ((total_sq - left_sq) - (total - left) * (total - left) / nr);
        double score = (total_sq - total * total / n) - sse;  // variance removed
        if (score > best_score) {
          best_score = score;
          best_feature = static_cast<int>(f);
          best_threshold = 0.5 * (column[i].first + column[i + 1].first);
        }
      }
    }
    if (best_feature < 0) return id;
    std::vector<int> left_rows, right_rows;
    for (int r : rows) {
      (x[static_cast<size_t>(r)][static_cast<size_t>(best_feature)] <= best_threshold ? left_rows
                                                                                      : right_rows)
          .push_back(r);
    }
    int l = Build(x, y, left_rows, depth + 1, rng);
    int r = Build(x, y, right_rows, depth + 1, rng);
    Node& node = nodes_[static_cast<size_t>(id)];
    node.feature = best_feature;
    node.threshold = best_threshold;
    node.left = l;
    node.right = r;
    return id;
  }

  std::vector<Node> nodes_;
};

std::vector<double> Features(const TuningSession& s, const Point& p) {
  std::vector<double> f;
  for (size_t i = 0; i < p.size(); ++i) {
    const TuneParam& param = s.space().params()[i];
    double v = param.numeric[static_cast<size_t>(p[i])];
    f.push_back(v);
    f.push_back(p[i]);  // the rank too: powers of two and variant switches split better on it
  }
  // Where earlier tunings ranked it (unranked: as their slowest), so the forest can learn how far
  // this device follows them.
  if (const TransferPrior* prior = s.prior(); prior && !prior->empty())
    f.push_back(prior->Rank(p).value_or(1.0));
  return f;
}

// How far apart two points lie: per parameter, the steps between their values over the list's
// length, summed.
double Distance(const SearchSpace& space, const Point& a, const Point& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double steps = static_cast<double>(std::abs(a[i] - b[i]));
    d += steps / std::max<double>(1, static_cast<double>(space.params()[i].values.size()) - 1);
  }
  return d;
}

double NormalCdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}
double NormalPdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
}

// The forest's expected improvement of `p` over `best` (both in log time), by at least `xi`.
double ExpectedImprovement(const std::vector<Tree>& forest, const TuningSession& s, const Point& p,
                           double best) {
  const double xi = 0.01;
  std::vector<double> f = Features(s, p);
  double sum = 0, sum_sq = 0;
  for (const Tree& t : forest) {
    double v = t.Predict(f);
    sum += v;
    sum_sq += v * v;
  }
  const double n = static_cast<double>(forest.size());
  double mu = sum / n;
  double sigma = std::sqrt(std::max(1e-12, sum_sq / n - mu * mu)) + 1e-3;
  double z = (best - mu - xi) / sigma;
  return (best - mu - xi) * NormalCdf(z) + sigma * NormalPdf(z);
}

// Among `neighbours` of `p` (SearchSpace::Neighbours), the unmeasured one that changes parameter
// `param` with the highest expected improvement; {} if every such neighbour is measured.
Point BestNeighbourAlong(const TuningSession& s, const std::vector<Tree>& forest, const Point& p,
                         const std::vector<Point>& neighbours, size_t param, double best) {
  double best_ei = -1;
  const Point* pick = nullptr;
  for (const Point& n : neighbours) {
    if (n[param] == p[param] || s.Seen(n)) continue;
    double ei = ExpectedImprovement(forest, s, n, best);
    if (ei > best_ei) {
      best_ei = ei;
      pick = &n;
    }
  }
  return pick ? *pick : Point{};
}

// The model's plan: a few random points, then rounds of refit → a batch of picks by expected
// improvement → one local step, each round's refit and local step waiting until the round's
// points are measured. Within a batch the picks depend on nothing measured since the refit, so
// they are handed out as fast as they are asked for; the random draws happen in the order a
// sequential run makes them.
class ModelStrategy : public TuningStrategy {
 public:
  std::vector<Point> Ask(TuningSession& s, int) override {
    if (finished_) return {};
    // Up to 8 points start the model (a small budget keeps most of itself for the model): the
    // configurations earlier tunings ranked best, then points spread over the space.
    if (initial_ < 0) {
      initial_ = std::clamp(s.remaining() / 4, 2, 8);
      if (s.prior())
        prior_picks_ = s.prior()->Best(std::min<size_t>(3, static_cast<size_t>(initial_ / 2)));
    }
    if (sampled_ < initial_) {
      ++sampled_;
      while (next_prior_ < prior_picks_.size()) {
        const Point& p = prior_picks_[next_prior_++];
        if (!s.Seen(p)) return HandOut(p);
      }
      return HandOut(SpreadPoint(s));
    }
    while (true) {
      if (Point p = NextOfBatch(s); !p.empty()) return HandOut(std::move(p));
      if (!awaiting_.empty()) return {};  // the local step and the refit see the whole round
      if (step_due_) {
        step_due_ = false;
        if (Point p = LocalStep(s); !p.empty()) return HandOut(std::move(p));
      }
      switch (Refit(s)) {
        case Plan::kBatch: continue;
        case Plan::kNothingWorks: return HandOut(s.SampleUnseen(s.rng()));
        case Plan::kNoCandidates: return HandOut({});
      }
    }
  }

  void Tell(TuningSession&, const Point& p, const Measurement&) override { awaiting_.erase(p); }

 private:
  enum class Plan { kBatch, kNothingWorks, kNoCandidates };

  // {p}, awaited; {} (finished) when p is empty: the space or the candidates ran out.
  std::vector<Point> HandOut(Point p) {
    if (p.empty()) {
      finished_ = true;
      return {};
    }
    awaiting_.insert(p);
    return {std::move(p)};
  }

  // Of a few random unseen points, the one farthest from every point measured or in flight (a
  // maximin design over the valid points: constraints cost no evaluation). Measured or in flight
  // alike, so a resumed run, told what its store holds, picks as the run it resumes did.
  Point SpreadPoint(TuningSession& s) const {
    Point pick;
    double farthest = -1;
    for (int c = 0; c < kSpreadDraws; ++c) {
      Point p = s.SampleUnseen(s.rng());
      if (p.empty()) break;
      double nearest = 1e300;
      for (const TraceEntry& e : s.trace())
        nearest = std::min(nearest, Distance(s.space(), p, e.point));
      for (const Point& q : s.pending_points())
        nearest = std::min(nearest, Distance(s.space(), p, q));
      if (nearest > farthest) {
        farthest = nearest;
        pick = std::move(p);
      }
    }
    return pick;
  }

  // Fits the forest to every measurement so far and ranks the candidates for the next batch.
  Plan Refit(TuningSession& s) {
    std::mt19937_64& rng = s.rng();
    // Training data: log time; a failure counts as twice the slowest time seen.
    double worst = -1e300, best = 1e300;
    for (const TraceEntry& e : s.trace()) {
      if (e.result.ok) {
        worst = std::max(worst, std::log(e.result.time_ms));
        best = std::min(best, std::log(e.result.time_ms));
      }
    }
    if (best > 1e299) return Plan::kNothingWorks;  // keep exploring at random
    best_ = best;
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    for (const TraceEntry& e : s.trace()) {
      x.push_back(Features(s, e.point));
      y.push_back(e.result.ok ? std::log(e.result.time_ms) : worst + std::log(2.0));
    }
    forest_.resize(kTrees);
    for (Tree& t : forest_) {
      std::vector<int> rows(x.size());
      for (int& r : rows)
        r = std::uniform_int_distribution<int>(0, static_cast<int>(x.size()) - 1)(rng);
      t.Fit(x, y, std::move(rows), rng);
    }
    std::vector<Point> candidates = Candidates(s);
    if (candidates.empty()) return Plan::kNoCandidates;

    // Refitting costs grow with the data, so with n measurements the n/16 best candidates by
    // expected improvement are measured before the next fit.
    std::vector<std::pair<double, size_t>> scored;
    for (size_t c = 0; c < candidates.size(); ++c) {
      scored.emplace_back(-ExpectedImprovement(forest_, s, candidates[c], best), c);
    }
    size_t batch = std::min(scored.size(), std::max<size_t>(1, s.trace().size() / 16));
    std::partial_sort(scored.begin(), scored.begin() + static_cast<long>(batch), scored.end());
    batch_.clear();
    for (size_t b = 0; b < batch; ++b) batch_.push_back(std::move(candidates[scored[b].second]));
    next_ = 0;
    step_due_ = true;
    return Plan::kBatch;
  }

  // Every unseen point of a small space; else a random sample plus the neighbourhoods of the
  // best points.
  std::vector<Point> Candidates(TuningSession& s) const {
    const SearchSpace& space = s.space();
    std::vector<Point> candidates;
    if (space.product_size() <= SearchSpace::kEnumerateLimit && space.size() <= kCandidates) {
      for (const Point& p : space.points()) {
        if (!s.Seen(p)) candidates.push_back(p);
      }
      return candidates;
    }
    std::vector<const TraceEntry*> ranked;
    for (const TraceEntry& e : s.trace()) {
      if (e.result.ok) ranked.push_back(&e);
    }
    std::sort(ranked.begin(), ranked.end(), [](const TraceEntry* a, const TraceEntry* b) {
      return a->result.time_ms < b->result.time_ms;
    });
    for (size_t i = 0; i < std::min<size_t>(5, ranked.size()); ++i) {
      for (Point& n : space.Neighbours(ranked[i]->point, false)) {
        if (!s.Seen(n)) candidates.push_back(std::move(n));
      }
    }
    if (s.prior()) {
      for (Point& p : s.prior()->Best(kPriorCandidates)) {
        if (!s.Seen(p)) candidates.push_back(std::move(p));
      }
    }
    for (size_t i = 0; i < kCandidates; ++i) {
      Point p = s.SampleUnseen(s.rng());
      if (p.empty()) break;
      candidates.push_back(std::move(p));
    }
    return candidates;
  }

  // The batch's next pick: each one a random unseen point instead with probability 1/5. A
  // candidate seen since the refit (picked twice, or drawn at random) is skipped, uncharged.
  Point NextOfBatch(TuningSession& s) {
    std::bernoulli_distribution explore(0.2);
    while (next_ < batch_.size()) {
      const Point& candidate = batch_[next_++];
      Point random = explore(s.rng()) ? s.SampleUnseen(s.rng()) : Point{};
      if (!random.empty()) return random;
      if (!s.Seen(candidate)) return candidate;
    }
    return {};
  }

  // Local refinement: the incumbent's unseen neighbour along the next parameter in turn
  // (skipping parameters whose neighbours are all seen), chosen by expected improvement.
  // Isolated optima that the surrogate smooths over are found this way.
  Point LocalStep(const TuningSession& s) {
    const TraceEntry* incumbent = s.best();
    if (!incumbent) return {};
    const size_t params = incumbent->point.size();
    const std::vector<Point> neighbours = s.space().Neighbours(incumbent->point, false);
    for (size_t tried = 0; tried < params; ++tried) {
      Point pick =
          BestNeighbourAlong(s, forest_, incumbent->point, neighbours, turn_++ % params, best_);
      if (!pick.empty()) return pick;
    }
    return {};
  }

  static constexpr int kTrees = 24;
  static constexpr size_t kCandidates = 3000;
  static constexpr int kSpreadDraws = 32;
  static constexpr size_t kPriorCandidates = 200;
  int initial_ = -1;  // random points to start with: set when first asked
  int sampled_ = 0;
  std::vector<Point> prior_picks_;  // the prior's best, tried first
  size_t next_prior_ = 0;
  std::vector<Tree> forest_;
  double best_ = 0;           // the best log time when the forest was fitted
  std::vector<Point> batch_;  // the candidates of this round, best first
  size_t next_ = 0;           // the next of batch_ to hand out
  bool step_due_ = false;     // the round's local step is still to come
  size_t turn_ = 0;           // the parameter the next local step changes
  std::set<Point> awaiting_;  // this strategy's points in flight
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<TuningStrategy> MakeModelStrategy() {
  return std::make_unique<ModelStrategy>();
}

}  // namespace kf
