#include "tune/space.hpp"

#include <algorithm>
#include <cstdlib>

namespace kf {

TuneParam MakeParam(std::string name, std::vector<std::string> values) {
  TuneParam p{std::move(name), std::move(values), {}};
  for (size_t i = 0; i < p.values.size(); ++i) {
    char* end = nullptr;
    double v = std::strtod(p.values[i].c_str(), &end);
    p.numeric.push_back(end && *end == '\0' && !p.values[i].empty() ? v : static_cast<double>(i));
  }
  return p;
}

SearchSpace SearchSpace::FromConstraints(std::vector<TuneParam> params,
                                         std::vector<Expr> constraints, Env env) {
  SearchSpace s;
  s.params_ = std::move(params);
  s.constraints_ = std::move(constraints);
  s.env_ = std::move(env);
  for (const Expr& c : s.constraints_) {
    size_t last = 0;
    for (const std::string& v : c.Variables()) {
      for (size_t i = 0; i < s.params_.size(); ++i) {
        if (s.params_[i].name == v) last = std::max(last, i);
      }
    }
    s.decided_at_.push_back(last);
  }
  return s;
}

SearchSpace SearchSpace::FromPoints(std::vector<TuneParam> params, std::vector<Point> points) {
  SearchSpace s;
  s.params_ = std::move(params);
  s.explicit_ = true;
  s.enumerated_ = true;
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  s.points_ = std::move(points);
  for (size_t i = 0; i < s.points_.size(); ++i) s.index_[s.points_[i]] = i;
  return s;
}

SearchSpace SearchSpace::FromKernel(const Kernel& kernel, Env env) {
  std::vector<TuneParam> params;
  for (const ParamSpec& p : kernel.params) params.push_back(MakeParam(p.name, p.values));
  return FromConstraints(std::move(params), kernel.constraints, std::move(env));
}

bool SearchSpace::Satisfies(const Point& p, size_t depth) const {
  Env env = env_;
  for (size_t i = 0; i <= depth && i < params_.size(); ++i) {
    env.Set(params_[i].name, params_[i].numeric[static_cast<size_t>(p[i])]);
  }
  for (size_t c = 0; c < constraints_.size(); ++c) {
    if (decided_at_[c] != depth) continue;
    try {
      if (!constraints_[c].EvalBool(env)) return false;
    } catch (const ExprError&) {
      return false;  // e.g. a division by zero: not a valid point
    }
  }
  return true;
}

const std::vector<Point>& SearchSpace::points() const {
  if (enumerated_) return points_;
  enumerated_ = true;
  if (params_.empty()) return points_;
  Point p(params_.size(), 0);
  // Depth-first over the product, pruning at the depth where each constraint is decided.
  size_t depth = 0;
  p[0] = -1;
  while (true) {
    if (++p[depth] >= static_cast<int>(params_[depth].values.size())) {
      if (depth == 0) break;
      --depth;
      continue;
    }
    if (!Satisfies(p, depth)) continue;
    if (depth + 1 == params_.size()) {
      index_[p] = points_.size();
      points_.push_back(p);
    } else {
      p[++depth] = -1;
    }
  }
  return points_;
}

double SearchSpace::product_size() const {
  double n = 1;
  for (const auto& p : params_) n *= static_cast<double>(p.values.size());
  return n;
}

bool SearchSpace::IsValid(const Point& p) const {
  if (p.size() != params_.size()) return false;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] < 0 || p[i] >= static_cast<int>(params_[i].values.size())) return false;
  }
  if (explicit_ || enumerated_) return index_.count(p) > 0;
  for (size_t d = 0; d < p.size(); ++d) {
    if (!Satisfies(p, d)) return false;
  }
  return true;
}

Config SearchSpace::ToConfig(const Point& p) const {
  Config c;
  for (size_t i = 0; i < params_.size(); ++i)
    c[params_[i].name] = params_[i].values[static_cast<size_t>(p[i])];
  return c;
}

std::optional<Point> SearchSpace::FromConfig(const Config& c) const {
  Point p;
  for (const auto& param : params_) {
    auto it = c.find(param.name);
    if (it == c.end()) return std::nullopt;
    auto v = std::find(param.values.begin(), param.values.end(), it->second);
    if (v == param.values.end()) return std::nullopt;
    p.push_back(static_cast<int>(v - param.values.begin()));
  }
  return p;
}

std::string SearchSpace::Key(const Point& p) const {
  std::string key;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (i) key += ",";
    key += params_[i].values[static_cast<size_t>(p[i])];
  }
  return key;
}

std::vector<Point> SearchSpace::Neighbours(const Point& p, bool adjacent) const {
  std::vector<Point> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    int n = static_cast<int>(params_[i].values.size());
    for (int v = 0; v < n; ++v) {
      if (v == p[i] || (adjacent && std::abs(v - p[i]) != 1)) continue;
      Point q = p;
      q[i] = v;
      if (IsValid(q)) out.push_back(q);
    }
  }
  return out;
}

Point SearchSpace::Sample(std::mt19937_64& rng) const {
  // Large products are sampled by rejection, so a space of 10^6 and more points is never listed
  // just to draw from it.
  if (!enumerated_ && product_size() > kEnumerateLimit) {
    for (int attempt = 0; attempt < 100000; ++attempt) {
      Point p(params_.size());
      for (size_t i = 0; i < params_.size(); ++i) {
        p[i] = std::uniform_int_distribution<int>(
            0, static_cast<int>(params_[i].values.size()) - 1)(rng);
      }
      if (IsValid(p)) return p;
    }
  }
  const auto& all = points();
  if (all.empty()) return {};
  return all[std::uniform_int_distribution<size_t>(0, all.size() - 1)(rng)];
}

}  // namespace kf
