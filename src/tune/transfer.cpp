#include "tune/transfer.hpp"

#include <algorithm>

namespace kf {

bool TransferPrior::Add(const SearchSpace& source, const std::map<Point, Measurement>& records) {
  const auto& theirs = source.params();
  const auto& ours = target_.params();
  if (theirs.size() != ours.size() || records.empty()) return false;
  // For each parameter, their value index -> ours (-1: a value we do not have).
  std::vector<std::vector<int>> map(ours.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    if (theirs[i].name != ours[i].name) return false;
    for (const std::string& v : theirs[i].values) {
      auto it = std::find(ours[i].values.begin(), ours[i].values.end(), v);
      map[i].push_back(it == ours[i].values.end() ? -1
                                                  : static_cast<int>(it - ours[i].values.begin()));
    }
  }
  // Rank by time, failures last and tied.
  std::vector<std::pair<double, const Point*>> ranked;
  for (const auto& [p, m] : records) ranked.emplace_back(m.ok ? m.time_ms : 1e300, &p);
  std::stable_sort(ranked.begin(), ranked.end(),  // equal times in the records' (point) order
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const double last = static_cast<double>(std::max<size_t>(1, ranked.size() - 1));
  for (size_t r = 0; r < ranked.size(); ++r) {
    Point mine;
    for (size_t i = 0; i < ours.size(); ++i) {
      int v = map[i][static_cast<size_t>((*ranked[r].second)[i])];
      if (v < 0) break;
      mine.push_back(v);
    }
    if (mine.size() != ours.size() || !target_.IsValid(mine)) continue;
    sum_[mine] += ranked[r].first >= 1e300 ? 1.0 : static_cast<double>(r) / last;
    ++count_[mine];
  }
  ++sources_;
  return true;
}

std::optional<double> TransferPrior::Rank(const Point& p) const {
  auto it = sum_.find(p);
  if (it == sum_.end()) return std::nullopt;
  return it->second / count_.at(p);
}

std::vector<Point> TransferPrior::Best(size_t k) const {
  std::vector<std::pair<double, const Point*>> ranked;
  for (const auto& [p, s] : sum_) ranked.emplace_back(s / count_.at(p), &p);
  k = std::min(k, ranked.size());
  // Equal ranks in point order (never by address: a seed gives one order).
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Point> out;
  for (size_t i = 0; i < k; ++i) out.push_back(*ranked[i].second);
  return out;
}

}  // namespace kf
