#pragma once
// The MAP-Elites archive: per behaviour cell, the best correct candidate so far (by speedup over
// the baseline). It also keeps what parent selection learns from: how often each cell was chosen
// as a parent and how often that gave an improvement somewhere (curiosity), and, per move between
// cells (child cell − parent cell), how often a child beat its parent (the behaviour-space
// gradient). Its value types (Cell, Elite) live in core, so proposers can read elites.

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/elite.hpp"

namespace kf {

enum class Selection { kUniform, kCuriosity, kFitness, kGradient };

// "uniform", "curiosity", "fitness", "gradient"; nullopt for anything else.
std::optional<Selection> SelectionByName(const std::string& name);
std::vector<std::string> SelectionNames();

class Archive {
 public:
  // True when `e` filled an empty cell or beat its elite.
  bool Offer(const Elite& e);
  const std::map<Cell, Elite>& cells() const { return cells_; }
  bool empty() const { return cells_.empty(); }
  const Elite* Best() const;

  // A parent: uniform over occupied cells; curiosity: cells whose children improved the archive
  // more often; fitness: weighted by speedup; gradient: cells from which the moves that improved
  // most often lead to an empty or beatable cell. nullptr when the archive is empty.
  const Elite* SelectParent(Selection how, std::mt19937_64& rng) const;
  // Up to `n` elites of other cells than `parent`'s, drawn without replacement.
  std::vector<const Elite*> Inspirations(const Elite* parent, int n, std::mt19937_64& rng) const;

  // What became of a child of `parent`: `child_cell` and whether it improved the archive and
  // whether it beat its parent.
  void RecordChild(const Cell& parent, const Cell& child_cell, bool improved_archive,
                   bool beat_parent);

 private:
  struct CellStats {
    int chosen = 0, improved = 0;
  };
  struct MoveStats {
    int tried = 0, better = 0;
  };
  std::map<Cell, Elite> cells_;
  std::map<Cell, CellStats> stats_;
  std::map<Cell, MoveStats> moves_;  // child cell − parent cell
};

}  // namespace kf
