#pragma once
// What a tuning strategy measures: a point of the space goes in, a time or a failure comes out.
// The replay objective answers from a recorded search space (Kernel Tuner's cache-file JSON,
// optionally gzipped), so strategies can be compared without a device and exactly repeatably.

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tune/space.hpp"

namespace kf {

struct Measurement {
  bool ok = false;
  double time_ms = 0;
  std::string failure;  // "CompilationFailedConfig", "incorrect", ...
};

class Objective {
 public:
  virtual ~Objective() = default;
  virtual Measurement Measure(const Point& point) = 0;
};

class ReplayObjective : public Objective {
 public:
  // Loads a Kernel Tuner cache file (.json or .json.gz). Throws InputError naming the file.
  static std::unique_ptr<ReplayObjective> Load(const std::string& path);
  Measurement Measure(const Point& point) override;

  const SearchSpace& space() const { return space_; }
  const std::string& kernel_name() const { return kernel_name_; }
  const std::string& device_name() const { return device_name_; }
  // Every recorded measurement, by point (for exact baselines in benchmarks).
  const std::map<Point, Measurement>& records() const { return records_; }
  // What our own recordings add under "kfoundry" (op class, device properties); null otherwise.
  const nlohmann::json& context() const { return context_; }

 private:
  SearchSpace space_;
  std::map<Point, Measurement> records_;
  std::string kernel_name_, device_name_;
  nlohmann::json context_;
};

// Reads a whole file, gunzipping it when it starts with the gzip magic.
std::string ReadMaybeGzipped(const std::string& path);

// A T1 parameter-space file (ConfigurationSpace: TuningParameters and Conditions, in Python
// syntax). Throws InputError naming the file and field.
SearchSpace LoadT1Space(const std::string& path, const Env& env = Env());

// Writes a full-space recording in Kernel Tuner's cache format; `context` (op class, device
// properties) goes under "kfoundry", a key Kernel Tuner ignores, so replay can apply the same
// rules.
void WriteKernelTunerCache(const std::string& path, const SearchSpace& space,
                           const std::map<Point, Measurement>& records,
                           const std::string& kernel_name, const std::string& device_name,
                           const nlohmann::json& context = nullptr);

}  // namespace kf
