#pragma once
// What earlier tunings of the same kind of kernel measured, as a prior over a new space: for every
// configuration that a source recorded, where it ranked there (0 = that source's fastest, 1 = its
// slowest or a failure), averaged over the sources that hold it. A source matches when it has
// the same parameter names; its configurations are matched by value, so a source whose lists
// differ still speaks for the values both share. A configuration that won on one device is a
// strong first guess on a similar one, and the ranks let a model learn how far the new device
// follows the old.

#include <map>
#include <optional>
#include <vector>

#include "tune/objective.hpp"
#include "tune/space.hpp"

namespace kf {

class TransferPrior {
 public:
  explicit TransferPrior(const SearchSpace& target) : target_(target) {}

  // Adds one source: a space and its measurements. False (nothing added) when its parameter names
  // differ from the target's.
  bool Add(const SearchSpace& source, const std::map<Point, Measurement>& records);
  int sources() const { return sources_; }
  bool empty() const { return sum_.empty(); }

  // The mean rank fraction of `p` over the sources that measured it; none when no source did.
  std::optional<double> Rank(const Point& p) const;
  // The target's points the sources ranked best, best first.
  std::vector<Point> Best(size_t k) const;

 private:
  const SearchSpace& target_;
  std::map<Point, double> sum_;
  std::map<Point, int> count_;
  int sources_ = 0;
};

}  // namespace kf
