#include "host/corpus.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <chrono>
#include <filesystem>

#include "core/codec.hpp"
#include "core/input_error.hpp"
#include "core/toml_file.hpp"
#include "host/judge.hpp"

namespace kf {

std::vector<CorpusEntry> LoadCorpus(const std::string& manifest, Language language) {
  toml::table root = ReadTomlFile(manifest);
  const std::string lang(LanguageName(language));
  const std::string dir = std::filesystem::path(manifest).parent_path().string();
  std::vector<CorpusEntry> out;
  const toml::array* kernels = root["kernel"].as_array();
  if (!kernels) throw InputError(manifest, 0, "kernel", "expected [[kernel]] entries");
  for (const toml::node& node : *kernels) {
    const toml::table* t = node.as_table();
    int line = static_cast<int>(node.source().begin.line);
    if (!t) throw InputError(manifest, line, "kernel", "expected a table");
    auto field = [&](const std::string& key) -> const toml::node* {
      if (const toml::node* n = t->get(key + "_" + lang)) return n;
      return t->get(key);
    };
    CorpusEntry e;
    const toml::node* file = field("file");
    if (!file || !file->is_string())
      throw InputError(manifest, line, "kernel.file", "expected a file stem");
    e.name = file->as_string()->get();
    e.path = fmt::format("{}/{}.{}", dir, e.name, language == Language::kCuda ? "cu" : "cl");
    if (!std::filesystem::exists(e.path)) continue;
    const toml::node* status = field("status");
    auto add_status = [&](const toml::node& n) {
      std::optional<Status> s = n.is_string() ? ParseStatus(n.as_string()->get()) : std::nullopt;
      if (!s)
        throw InputError(manifest, static_cast<int>(n.source().begin.line), "kernel.status",
                         "unknown status");
      e.statuses.push_back(*s);
    };
    if (!status) throw InputError(manifest, line, "kernel.status", "missing");
    if (const toml::array* list = status->as_array()) {
      for (const auto& s : *list) add_status(s);
    } else {
      add_status(*status);
    }
    if (const toml::node* task = field("task"); task && task->is_string())
      e.task = task->as_string()->get();
    if (const toml::node* reason = field("reason"); reason && reason->is_string())
      e.reason = reason->as_string()->get();
    out.push_back(std::move(e));
  }
  return out;
}

std::string CheckVerdict(const CorpusEntry& entry, const Evaluation& ev) {
  bool status_ok = false;
  std::string wanted;
  for (Status s : entry.statuses) {
    status_ok = status_ok || s == ev.status;
    wanted += (wanted.empty() ? "" : " or ") + std::string(StatusName(s));
  }
  if (!status_ok)
    return fmt::format("{}: got {} ({}), wanted {}", entry.name, StatusName(ev.status), ev.reason,
                       wanted);
  if (!entry.reason.empty() && ev.reason.find(entry.reason) == std::string::npos) {
    return fmt::format("{}: reason '{}' lacks '{}'", entry.name, ev.reason, entry.reason);
  }
  return "";
}

StreamResult RunStream(Judge& judge, const std::vector<StreamItem>& items) {
  using Clock = std::chrono::steady_clock;
  StreamResult result;
  Clock::time_point start = Clock::now();
  for (const StreamItem& item : items) {
    Clock::time_point t0 = Clock::now();
    // Each job carries its own key, and its answer must bring it back, whatever the verdict.
    std::string key = fmt::format("stream#{}", result.evaluated);
    JudgeResult r = judge.Evaluate({item.kernel, item.config, std::nullopt, key});
    if (!r.tool_error.empty()) throw std::runtime_error(r.tool_error);
    if (r.key != key)
      result.failures.push_back(fmt::format("#{}: {}: the answer came back with key '{}', not '{}'",
                                            result.evaluated, item.kernel.path, r.key, key));
    const Evaluation& ev = r.evaluation;
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::string status(StatusName(ev.status));
    ++result.count_by_status[status];
    result.seconds_by_status[status] += s;
    ++result.evaluated;
    std::string wrong;
    if (item.expect) {
      wrong = CheckVerdict(*item.expect, ev);
    } else if (ev.status != Status::kOk) {
      wrong = fmt::format("{} {}: good kernel judged {} ({})", item.kernel.path,
                          ConfigToString(item.config), status, ev.reason);
    }
    if (!wrong.empty()) result.failures.push_back(fmt::format("#{}: {}", result.evaluated, wrong));
  }
  result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace kf
