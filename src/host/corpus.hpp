#pragma once
// A corpus of kernels with the verdict each must get (tests/data/corpus/corpus.toml): data, not
// code, so adding a bad kernel is adding a file and three lines.

#include <map>
#include <string>
#include <vector>

#include "core/evaluation.hpp"
#include "core/kernel.hpp"

namespace kf {

struct CorpusEntry {
  std::string name;
  std::string task = "rope_llama3";  // the bundled task the kernel is judged on
  std::string path;                  // the kernel file for the chosen language
  std::vector<Status> statuses;      // any of these is right
  std::string reason;                // a substring the reason must contain ("" = any)
};

// Reads the manifest; entries whose file does not exist for `language` are skipped. Throws
// InputError naming the manifest's line on a malformed entry.
std::vector<CorpusEntry> LoadCorpus(const std::string& manifest, Language language);

// "" when `ev` is the verdict `entry` requires, else what is wrong.
std::string CheckVerdict(const CorpusEntry& entry, const Evaluation& ev);

// A stream of candidates through the judge, one after another, as a search would send them: each
// item is a corpus kernel that must get its verdict, or a good kernel (no entry) that must be `ok`.
struct StreamItem {
  Kernel kernel;
  Config config;
  const CorpusEntry* expect = nullptr;  // null: must be ok
};

struct StreamResult {
  int evaluated = 0;
  std::vector<std::string> failures;  // wrong verdicts, one line each
  std::map<std::string, int> count_by_status;
  std::map<std::string, double> seconds_by_status;  // wall time of the evaluations, by verdict
  double wall_s = 0;
};

class Judge;
StreamResult RunStream(Judge& judge, const std::vector<StreamItem>& items);

}  // namespace kf
