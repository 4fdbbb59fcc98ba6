#pragma once
// The live objective: a template's configurations judged on the device through the supervised
// executor. A configuration that is not `ok` is a failure, remembered with its verdict.

#include <map>

#include "core/evaluation.hpp"
#include "eval/executor.hpp"
#include "tune/objective.hpp"

namespace kf {

// What a tuner learns from a verdict: the median time of an `ok` one, else the status as the
// failure.
Measurement MeasurementOf(const Evaluation& ev);

class LiveObjective : public Objective {
 public:
  LiveObjective(Supervisor& supervisor, const Kernel& kernel, const SearchSpace& space)
      : supervisor_(supervisor), kernel_(kernel), space_(space) {}
  Measurement Measure(const Point& point) override;
  const std::map<Point, Evaluation>& evaluations() const { return evaluations_; }

 private:
  Supervisor& supervisor_;
  const Kernel& kernel_;
  const SearchSpace& space_;
  std::map<Point, Evaluation> evaluations_;
};

}  // namespace kf
