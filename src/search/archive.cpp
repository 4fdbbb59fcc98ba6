#include "search/archive.hpp"

#include <algorithm>

namespace kf {

std::optional<Selection> SelectionByName(const std::string& name) {
  if (name == "uniform") return Selection::kUniform;
  if (name == "curiosity") return Selection::kCuriosity;
  if (name == "fitness") return Selection::kFitness;
  if (name == "gradient") return Selection::kGradient;
  return std::nullopt;
}

std::vector<std::string> SelectionNames() {
  return {"uniform", "curiosity", "fitness", "gradient"};
}

bool Archive::Offer(const Elite& e) {
  auto it = cells_.find(e.cell);
  if (it != cells_.end() && it->second.speedup >= e.speedup) return false;
  cells_.insert_or_assign(e.cell, e);
  return true;
}

const Elite* Archive::Best() const {
  const Elite* best = nullptr;
  for (const auto& [cell, e] : cells_) {
    if (!best || e.speedup > best->speedup) best = &e;
  }
  return best;
}

const Elite* Archive::SelectParent(Selection how, std::mt19937_64& rng) const {
  if (cells_.empty()) return nullptr;
  std::vector<const Elite*> elites;
  std::vector<double> weights;
  for (const auto& [cell, e] : cells_) {
    double w = 1;
    if (how == Selection::kCuriosity) {
      // Laplace-smoothed success rate of the cell's children: untried cells stay attractive.
      auto s = stats_.find(cell);
      int chosen = s == stats_.end() ? 0 : s->second.chosen;
      int improved = s == stats_.end() ? 0 : s->second.improved;
      w = (1.0 + improved) / (2.0 + chosen);
    } else if (how == Selection::kFitness) {
      w = std::max(1e-3, e.speedup);
    } else if (how == Selection::kGradient) {
      // The best success rate of a known move from this cell, among moves that land in a cell
      // that is empty or held by a weaker elite; 0.5 for a cell no move was learned from.
      double best = 0.5;
      bool any = false;
      for (const auto& [move, m] : moves_) {
        Cell target = cell;
        for (size_t d = 0; d < target.size() && d < move.size(); ++d) target[d] += move[d];
        auto t = cells_.find(target);
        if (t != cells_.end() && t->second.speedup > e.speedup) continue;
        double rate = (1.0 + m.better) / (2.0 + m.tried);
        best = any ? std::max(best, rate) : rate;
        any = true;
      }
      w = best;
    }
    elites.push_back(&e);
    weights.push_back(w);
  }
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  return elites[pick(rng)];
}

std::vector<const Elite*> Archive::Inspirations(const Elite* parent, int n,
                                                std::mt19937_64& rng) const {
  std::vector<const Elite*> others;
  for (const auto& [cell, e] : cells_) {
    if (!parent || cell != parent->cell) others.push_back(&e);
  }
  std::shuffle(others.begin(), others.end(), rng);
  if (static_cast<int>(others.size()) > n) others.resize(static_cast<size_t>(std::max(0, n)));
  return others;
}

void Archive::RecordChild(const Cell& parent, const Cell& child_cell, bool improved_archive,
                          bool beat_parent) {
  CellStats& s = stats_[parent];
  ++s.chosen;
  s.improved += improved_archive;
  Cell move = child_cell;
  for (size_t d = 0; d < move.size() && d < parent.size(); ++d) move[d] -= parent[d];
  MoveStats& m = moves_[move];
  ++m.tried;
  m.better += beat_parent;
}

}  // namespace kf
