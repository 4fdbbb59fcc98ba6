#include "eval/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "eval/hints.hpp"

namespace kf {

bool CarriedOver(Evaluation& ev, const std::string& where) {
  return Fail(ev, Status::kIncorrect,
              fmt::format("the output is the previous launch's result, not this one's: state "
                          "carried between launches ({})",
                          where));
}

bool Fail(Evaluation& ev, Status s, std::string reason) {
  ev.status = s;
  ev.reason = std::move(reason);
  return false;
}

std::string CompileLogFor(const std::string& log, const std::string& path) {
  if (path.empty()) return log;
  static const std::regex driver_name(
      R"(([^\s:'"]*/)?tempfile_[A-Za-z0-9_]+\.cl|<source>|<kernel>|<program source>|)"
      R"(\bcandidate\.cu(?=[(:]))");
  std::string out;
  size_t done = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), driver_name);
       it != std::sregex_iterator(); ++it) {
    out.append(log, done, static_cast<size_t>(it->position()) - done);
    out += path;
    done = static_cast<size_t>(it->position() + it->length());
  }
  return out + log.substr(done);
}

bool CompileFailed(Evaluation& ev, const std::string& log, const std::string& path,
                   const DeviceInfo& info) {
  ev.compile_log = CompileLogFor(log, path);
  ev.hints = CompileHints(ev.compile_log, info);
  std::string first_line = ev.compile_log.substr(0, ev.compile_log.find('\n'));
  return Fail(ev, Status::kCompileError, first_line.empty() ? "compilation failed" : first_line);
}

bool LaunchFailed(Evaluation& ev, const std::string& error, std::span<const LaunchStep> steps,
                  const DeviceInfo& info, const std::string& where) {
  ev.hints.clear();
  for (const LaunchStep& step : steps) {
    for (std::string& hint : LaunchHints(error, step.launch, info)) {
      if (std::find(ev.hints.begin(), ev.hints.end(), hint) == ev.hints.end())
        ev.hints.push_back(std::move(hint));
    }
  }
  return Fail(ev, Status::kLaunchError, fmt::format("{} ({})", error, where));
}

Verdict VerdictFrom(const ArgSpec& a, const Figures& f, const Tolerance& tol,
                    const std::string& where, const std::function<double(bool)>& first_bad) {
  if (f.unwritten > 0) {
    return {{Status::kIncorrect, fmt::format("{}: {} of {} elements never written ({})", a.name,
                                             f.unwritten, f.elements, where)}};
  }
  if (f.nan_count > 0) {
    return {{Status::kNan, fmt::format("{}: {} NaN/Inf elements where the reference is finite ({})",
                                       a.name, f.nan_count, where)}};
  }
  if (f.out_of_tol > 0 || f.bad_ratio() > tol.max_bad_ratio) {
    int64_t k = std::max<int64_t>(f.first_bad, 0);
    return {{Status::kIncorrect,
             fmt::format("{}: {} of {} elements out of tolerance, {:.3g}% over 1% relative error; "
                         "first at [{}]: got {:.6g}, expected {:.6g} ({})",
                         a.name, f.out_of_tol, f.elements, 100.0 * f.bad_ratio(), k,
                         first_bad(false), first_bad(true), where)}};
  }
  return std::nullopt;
}

void RecordFigures(const Figures& total, Evaluation& ev) {
  ev.compared = true;
  ev.max_abs_err = total.max_abs_err;
  ev.max_rel_err = total.max_rel_err;
  ev.bad_ratio = total.bad_ratio();
  ev.nan_count = total.nan_count;
}

}  // namespace kf
