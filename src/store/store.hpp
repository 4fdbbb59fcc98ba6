#pragma once
// The Store: everything a run produces — the run, kernels, candidates, evaluations, archive cells
// and events — keyed so that every write is idempotent: a kernel by the hash of its source, a
// candidate by kernel and configuration, an evaluation by candidate, device and evaluation
// settings. A redelivered job or a resumed run never duplicates a result. Implementations:
// SQLite (sqlite/, the default), PostgreSQL (later).

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluation.hpp"
#include "core/kernel.hpp"

namespace kf {

struct RunInfo {
  std::string name, task, device;
  nlohmann::json settings = nlohmann::json::object();
  std::string created_at;  // filled by the store
};

struct StoredEvaluation {
  long long seq = 0;  // order of insertion within the run
  std::string key, candidate_id, kernel_id;
  Config config;
  Evaluation evaluation;
};

struct ArchiveEntry {
  std::vector<int> cell;
  std::string candidate_id;
  double speedup = 0;
};

std::string KernelId(const Kernel& kernel);
std::string CandidateId(const std::string& kernel_id, const Config& config);
// Device and evaluation settings (sizes, seeds, timing) decide whether two verdicts are the same.
std::string EvaluationKey(const std::string& candidate_id, const std::string& device,
                          const nlohmann::json& settings);

class Store {
 public:
  virtual ~Store() = default;
  virtual int schema_version() const = 0;

  // Creates the run, or returns the stored one of that name (to resume it). Throws InputError if a
  // run of that name exists for another task or device.
  virtual RunInfo OpenRun(const RunInfo& wanted) = 0;
  virtual std::optional<RunInfo> FindRun(const std::string& name) = 0;

  // Each returns false when the record was already there (nothing is written twice).
  virtual bool PutKernel(const Kernel& kernel) = 0;
  virtual bool PutEvaluation(const std::string& run, const Kernel& kernel, const Config& config,
                             const std::string& key, const Evaluation& evaluation) = 0;
  virtual std::optional<Evaluation> FindEvaluation(const std::string& key) = 0;
  virtual std::vector<StoredEvaluation> RunEvaluations(const std::string& run) = 0;

  // Keeps the candidate with the higher speedup for the cell; true when it replaced or filled it.
  virtual bool OfferArchiveCell(const std::string& run, const ArchiveEntry& entry) = 0;
  virtual std::vector<ArchiveEntry> Archive(const std::string& run) = 0;

  virtual void AddEvent(const std::string& run, const std::string& kind,
                        const nlohmann::json& data) = 0;
  virtual std::vector<nlohmann::json> Events(const std::string& run) = 0;
};

// "sqlite:PATH" (also a bare path). Throws InputError for an unknown scheme or an unusable file.
std::unique_ptr<Store> OpenStore(const std::string& url);

}  // namespace kf
