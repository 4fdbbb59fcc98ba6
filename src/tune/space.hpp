#pragma once
// Parameter spaces: named parameters with listed values, and constraints over parameters and
// device properties. A space is either explicit (a list of valid points, as a recorded search
// space holds) or the product of the value lists filtered by the constraints; the valid points
// are enumerated depth first, each constraint checked as soon as its last parameter is set, so
// the full product is never built. Points are vectors of value indices.

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/expr.hpp"
#include "core/kernel.hpp"

namespace kf {

struct TuneParam {
  std::string name;
  std::vector<std::string> values;  // as written
  std::vector<double> numeric;      // the value as a number (non-numeric: its index)
};

using Point = std::vector<int>;  // one value index per parameter

class SearchSpace {
 public:
  // The product of `params` filtered by `constraints` (which may also read `env`: device
  // properties, sizes).
  static SearchSpace FromConstraints(std::vector<TuneParam> params, std::vector<Expr> constraints,
                                     Env env);
  // Exactly the points given.
  static SearchSpace FromPoints(std::vector<TuneParam> params, std::vector<Point> points);
  // A kernel template's @param and @constraint annotations.
  static SearchSpace FromKernel(const Kernel& kernel, Env env);

  const std::vector<TuneParam>& params() const { return params_; }
  // All valid points, in a fixed order (enumerated once, on first use).
  const std::vector<Point>& points() const;
  size_t size() const { return points().size(); }
  double product_size() const;
  bool IsValid(const Point& p) const;

  Config ToConfig(const Point& p) const;
  std::optional<Point> FromConfig(const Config& c) const;
  std::string Key(const Point& p) const;  // "v1,v2,..." as Kernel Tuner writes it

  // Valid points that differ from `p` in one parameter: by one step in its value list
  // (`adjacent`), or to any other value.
  std::vector<Point> Neighbours(const Point& p, bool adjacent) const;
  // A uniformly drawn valid point ({} when the space is empty).
  Point Sample(std::mt19937_64& rng) const;
  static constexpr double kEnumerateLimit = 2e5;  // products above this are sampled, not listed

 private:
  bool Satisfies(const Point& p, size_t depth) const;  // constraints decided by params [0, depth]

  std::vector<TuneParam> params_;
  std::vector<Expr> constraints_;
  std::vector<size_t> decided_at_;  // per constraint: the index of its last parameter
  Env env_;
  bool explicit_ = false;
  mutable bool enumerated_ = false;
  mutable std::vector<Point> points_;
  mutable std::map<Point, size_t> index_;
};

TuneParam MakeParam(std::string name, std::vector<std::string> values);

}  // namespace kf
