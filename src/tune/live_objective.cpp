#include "tune/live_objective.hpp"

namespace kf {

Measurement MeasurementOf(const Evaluation& ev) {
  Measurement m;
  m.ok = ev.status == Status::kOk && ev.time.has_value();
  m.time_ms = m.ok ? ev.time->median_ms : 0;
  if (!m.ok) m.failure = std::string(StatusName(ev.status));
  return m;
}

Measurement LiveObjective::Measure(const Point& point) {
  Evaluation ev = supervisor_.Evaluate(kernel_, space_.ToConfig(point));
  Measurement m = MeasurementOf(ev);
  evaluations_[point] = std::move(ev);
  return m;
}

}  // namespace kf
