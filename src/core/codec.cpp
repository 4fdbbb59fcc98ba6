#include "core/codec.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/task.hpp"

namespace kf {

namespace {

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<double> OptionalFrom(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

// A comparison figure, or null when no comparison happened.
template <typename T>
nlohmann::json Compared(const Evaluation& ev, T value) {
  return ev.compared ? nlohmann::json(value) : nlohmann::json(nullptr);
}

template <typename T>
T NumberOr(const nlohmann::json& j, const char* key, T fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<T>() : fallback;
}

nlohmann::json TimingJson(const std::optional<TimingStats>& t) {
  if (!t) return nullptr;
  return {{"median", t->median_ms}, {"min", t->min_ms}, {"max", t->max_ms}, {"runs", t->runs}};
}

std::optional<TimingStats> TimingFrom(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  TimingStats t;
  t.median_ms = j.at("median").get<double>();
  t.min_ms = j.at("min").get<double>();
  t.max_ms = j.at("max").get<double>();
  t.runs = j.at("runs").get<int>();
  return t;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string_view RoleName(ArgRole r) {
  switch (r) {
    case ArgRole::kIn: return "in";
    case ArgRole::kOut: return "out";
    case ArgRole::kInOut: return "inout";
  }
  return "?";
}

nlohmann::json SizeSetsJson(const std::vector<SizeSet>& sets) {
  nlohmann::json out = nlohmann::json::array();
  for (const SizeSet& s : sets) {
    // Sizes are whole numbers (B: 8, not 8.0); a set's settings may not be (eps: 1e-05).
    nlohmann::json sizes = nlohmann::json::object();
    for (const auto& [name, value] : s.sizes) {
      if (value == std::floor(value) && std::abs(value) < 9e15) {
        sizes[name] = static_cast<long long>(value);
      } else {
        sizes[name] = value;
      }
    }
    out.push_back({{"name", s.name}, {"device_class", s.device_class}, {"sizes", sizes}});
  }
  return out;
}

}  // namespace

std::optional<Status> ParseStatus(std::string_view name) {
  for (Status s :
       {Status::kOk, Status::kCompileError, Status::kLaunchError, Status::kIncorrect, Status::kNan,
        Status::kCrash, Status::kTimeout, Status::kImplausible, Status::kInvalidConfig}) {
    if (StatusName(s) == name) return s;
  }
  return std::nullopt;
}

nlohmann::json ConfigToJson(const Config& config) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : config) {
    char* end = nullptr;
    long long n = std::strtoll(v.c_str(), &end, 10);
    out[k] = (end && *end == '\0' && !v.empty()) ? nlohmann::json(n) : nlohmann::json(v);
  }
  return out;
}

Config ConfigFromJson(const nlohmann::json& j) {
  Config c;
  for (const auto& [k, v] : j.items()) c[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return c;
}

namespace {

nlohmann::json ExternalBaselinesJson(const std::vector<ExternalBaseline>& baselines) {
  nlohmann::json out = nlohmann::json::array();
  for (const ExternalBaseline& b : baselines) {
    nlohmann::json j = {{"name", b.name},
                        {"device", b.device},
                        {"time_ms", TimingJson(b.time)},
                        {"speedup", Optional(b.speedup)}};
    if (!b.unavailable.empty()) j["unavailable"] = b.unavailable;
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<ExternalBaseline> ExternalBaselinesFrom(const nlohmann::json& j) {
  std::vector<ExternalBaseline> out;
  if (!j.is_array()) return out;
  for (const nlohmann::json& b : j) {
    ExternalBaseline e;
    e.name = b.value("name", "");
    e.device = b.value("device", "");
    e.time = TimingFrom(b.value("time_ms", nlohmann::json()));
    e.speedup = OptionalFrom(b, "speedup");
    e.unavailable = b.value("unavailable", "");
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

nlohmann::json EvaluationToJson(const Evaluation& ev) {
  return {
      {"status", StatusName(ev.status)},
      {"reason", ev.reason},
      {"device", ev.device},
      {"config", ConfigToJson(ev.config)},
      {"sizes", ev.bench_sizes},
      {"time_ms", TimingJson(ev.time)},
      {"baseline_time_ms", TimingJson(ev.baseline_time)},
      {"speedup", Optional(ev.speedup)},
      {"external_baselines", ExternalBaselinesJson(ev.external_baselines)},
      {"max_abs_err", Compared(ev, ev.max_abs_err)},
      {"max_rel_err", Compared(ev, ev.max_rel_err)},
      {"bad_ratio", Compared(ev, ev.bad_ratio)},
      {"nan_count", Compared(ev, ev.nan_count)},
      {"bandwidth_gbs", Optional(ev.bandwidth_gbs)},
      {"roofline_fraction", Optional(ev.roofline_fraction)},
      {"gflops", Optional(ev.gflops)},
      {"compute_fraction", Optional(ev.compute_fraction)},
      {"descriptor",
       ev.descriptor.empty() ? nlohmann::json(nullptr) : nlohmann::json(ev.descriptor)},
      {"compile_log", ev.compile_log},
      {"compile_cache_hit", ev.compile_cache_hit},
      {"hints", ev.hints},
      {"check_seeds", ev.check_seeds},
      {"phase_ms", ev.phase_ms},
  };
}

Evaluation EvaluationFromJson(const nlohmann::json& j) {
  Evaluation ev;
  std::optional<Status> status = ParseStatus(j.at("status").get<std::string>());
  if (!status) throw nlohmann::json::other_error::create(501, "unknown status", &j);
  ev.status = *status;
  ev.reason = j.value("reason", "");
  ev.device = j.value("device", "");
  ev.config = ConfigFromJson(j.value("config", nlohmann::json::object()));
  ev.bench_sizes = j.value("sizes", "");
  ev.time = TimingFrom(j.value("time_ms", nlohmann::json()));
  ev.baseline_time = TimingFrom(j.value("baseline_time_ms", nlohmann::json()));
  ev.speedup = OptionalFrom(j, "speedup");
  ev.external_baselines = ExternalBaselinesFrom(j.value("external_baselines", nlohmann::json()));
  // Stored before the figures could be absent, an evaluation has numbers (0 where nothing was
  // compared): it loads as compared.
  ev.compared = j.contains("max_abs_err") && j["max_abs_err"].is_number();
  if (ev.compared) {
    ev.max_abs_err = j["max_abs_err"].get<double>();
    ev.max_rel_err = NumberOr(j, "max_rel_err", 0.0);
    ev.bad_ratio = NumberOr(j, "bad_ratio", 0.0);
    ev.nan_count = NumberOr(j, "nan_count", 0LL);
  }
  ev.bandwidth_gbs = OptionalFrom(j, "bandwidth_gbs");
  ev.roofline_fraction = OptionalFrom(j, "roofline_fraction");
  ev.gflops = OptionalFrom(j, "gflops");
  ev.compute_fraction = OptionalFrom(j, "compute_fraction");
  ev.compile_log = j.value("compile_log", "");
  ev.compile_cache_hit = j.value("compile_cache_hit", false);
  ev.hints = j.value("hints", std::vector<std::string>{});
  ev.check_seeds = j.value("check_seeds", std::vector<unsigned long long>{});
  if (j.contains("phase_ms") && j["phase_ms"].is_object())
    ev.phase_ms = j["phase_ms"].get<std::map<std::string, double>>();
  if (j.contains("descriptor") && j["descriptor"].is_array()) {
    ev.descriptor = j["descriptor"].get<std::vector<int>>();
  }
  return ev;
}

std::string_view DeviceClassName(DeviceClass c) {
  switch (c) {
    case DeviceClass::kGpu: return "gpu";
    case DeviceClass::kCpu: return "cpu";
    case DeviceClass::kOther: return "other";
  }
  return "other";
}

DeviceClass DeviceClassFromName(std::string_view name) {
  if (name == "gpu") return DeviceClass::kGpu;
  if (name == "cpu") return DeviceClass::kCpu;
  return DeviceClass::kOther;
}

nlohmann::json DeviceInfoToJson(const DeviceInfo& d) {
  return {
      {"id", d.Selector()},
      {"backend", d.backend},
      {"index", d.index},
      {"name", d.name},
      {"vendor", d.vendor},
      {"class", DeviceClassName(d.device_class)},
      {"arch", d.arch},
      {"driver_version", d.driver_version},
      {"compiler_version", d.compiler_version},
      {"compute_units", d.compute_units},
      {"max_work_group_size", d.max_work_group_size},
      {"local_mem_bytes", d.local_mem_bytes},
      {"sub_group_width", d.sub_group_width},
      {"global_mem_bytes", d.global_mem_bytes},
      {"cache_bytes", d.cache_bytes},
      {"spec_bandwidth_gbs",
       d.spec_bandwidth_gbs > 0 ? nlohmann::json(d.spec_bandwidth_gbs) : nlohmann::json(nullptr)},
  };
}

DeviceInfo DeviceInfoFromJson(const nlohmann::json& j) {
  DeviceInfo d;
  d.backend = j.at("backend").get<std::string>();
  d.index = j.value("index", 0);
  d.name = j.value("name", "");
  d.vendor = j.value("vendor", "");
  d.device_class = DeviceClassFromName(j.value("class", "other"));
  d.arch = j.value("arch", "");
  d.driver_version = j.value("driver_version", "");
  d.compiler_version = j.value("compiler_version", "");
  d.compute_units = j.value("compute_units", 0);
  d.max_work_group_size = j.value("max_work_group_size", int64_t{0});
  d.local_mem_bytes = j.value("local_mem_bytes", int64_t{0});
  d.sub_group_width = j.value("sub_group_width", 1);
  d.global_mem_bytes = j.value("global_mem_bytes", int64_t{0});
  d.cache_bytes = j.value("cache_bytes", int64_t{0});
  const nlohmann::json& bw = j.value("spec_bandwidth_gbs", nlohmann::json());
  d.spec_bandwidth_gbs = bw.is_number() ? bw.get<double>() : 0.0;
  return d;
}

nlohmann::json CompileRequestToJson(const CompileRequest& r) {
  nlohmann::json defines = nlohmann::json::array();
  for (const auto& [k, v] : r.defines) defines.push_back({k, v});
  return {{"source", r.source}, {"entries", r.entries}, {"defines", defines}};
}

CompileRequest CompileRequestFromJson(const nlohmann::json& j) {
  CompileRequest r;
  r.source = j.at("source").get<std::string>();
  r.entries = j.at("entries").get<std::vector<std::string>>();
  for (const auto& d : j.at("defines"))
    r.defines.emplace_back(d.at(0).get<std::string>(), d.at(1).get<std::string>());
  return r;
}

nlohmann::json CompileResultToJson(const CompileResult& r) {
  return {{"ok", r.ok},
          {"log", r.log},
          {"cache_hit", r.cache_hit},
          {"binary", Base64Encode(r.artifact.binary)},
          {"symbols", r.artifact.symbols},
          {"listing", r.artifact.listing}};
}

CompileResult CompileResultFromJson(const nlohmann::json& j) {
  CompileResult r;
  r.ok = j.at("ok").get<bool>();
  r.log = j.value("log", "");
  r.cache_hit = j.value("cache_hit", false);
  r.artifact.binary = Base64Decode(j.value("binary", ""));
  r.artifact.symbols = j.value("symbols", std::vector<std::string>{});
  r.artifact.listing = j.value("listing", "");
  return r;
}

nlohmann::json KernelToJson(const Kernel& k) {
  return {{"path", k.path}, {"source", k.source}};
}

Kernel KernelFromJson(const nlohmann::json& j) {
  return ParseKernel(j.at("path").get<std::string>(), j.at("source").get<std::string>());
}

nlohmann::json EvalSettingsToJson(const EvalSettings& s) {
  return {{"check_seeds", s.check_seeds},
          {"warmup_runs", s.warmup_runs},
          {"min_runs", s.min_runs},
          {"max_runs", s.max_runs},
          {"min_timed_ms", s.min_timed_ms},
          {"max_timing_ms", s.max_timing_ms},
          {"ci_target", s.ci_target},
          {"interleave_baseline", s.interleave_baseline},
          {"baseline_every", s.baseline_every},
          {"baseline_seconds", s.baseline_seconds},
          {"time_to_beat_ms", s.time_to_beat_ms},
          {"stop_factor", s.stop_factor},
          {"early_runs", s.early_runs},
          {"check_on", s.check_on}};
}

EvalSettings EvalSettingsFromJson(const nlohmann::json& j) {
  EvalSettings s;
  s.check_seeds = j.value("check_seeds", s.check_seeds);
  s.warmup_runs = j.value("warmup_runs", s.warmup_runs);
  s.min_runs = j.value("min_runs", s.min_runs);
  s.max_runs = j.value("max_runs", s.max_runs);
  s.min_timed_ms = j.value("min_timed_ms", s.min_timed_ms);
  s.max_timing_ms = j.value("max_timing_ms", s.max_timing_ms);
  s.ci_target = j.value("ci_target", s.ci_target);
  s.interleave_baseline = j.value("interleave_baseline", s.interleave_baseline);
  s.baseline_every = j.value("baseline_every", s.baseline_every);
  s.baseline_seconds = j.value("baseline_seconds", s.baseline_seconds);
  s.time_to_beat_ms = j.value("time_to_beat_ms", s.time_to_beat_ms);
  s.stop_factor = j.value("stop_factor", s.stop_factor);
  s.early_runs = j.value("early_runs", s.early_runs);
  s.check_on = j.value("check_on", s.check_on);
  return s;
}

nlohmann::json RunRequestToJson(const RunRequest& r) {
  nlohmann::json out = {{"kernel", KernelToJson(r.candidate.kernel)},
                        {"config", ConfigToJson(r.candidate.config)}};
  if (r.candidate.settings) out["settings"] = EvalSettingsToJson(*r.candidate.settings);
  if (!r.candidate.key.empty()) out["key"] = r.candidate.key;
  if (r.compiled) out["compiled"] = CompileResultToJson(*r.compiled);
  return out;
}

RunRequest RunRequestFromJson(const nlohmann::json& j) {
  RunRequest r;
  r.candidate.kernel = KernelFromJson(j.at("kernel"));
  r.candidate.config = ConfigFromJson(j.at("config"));
  if (j.contains("settings")) r.candidate.settings = EvalSettingsFromJson(j["settings"]);
  r.candidate.key = j.value("key", "");
  if (j.contains("compiled")) r.compiled = CompileResultFromJson(j["compiled"]);
  return r;
}

nlohmann::json EliteToJson(const Elite& e) {
  return {{"cell", e.cell},           {"kernel", KernelToJson(e.kernel)},
          {"kernel_id", e.kernel_id}, {"config", ConfigToJson(e.config)},
          {"speedup", e.speedup},     {"time_ms", e.time_ms},
          {"origin", e.origin},       {"mutations", e.mutations},
          {"device", e.device},       {"evaluation", EvaluationToJson(e.evaluation)}};
}

Elite EliteFromJson(const nlohmann::json& j) {
  Elite e;
  e.cell = j.at("cell").get<Cell>();
  e.kernel = KernelFromJson(j.at("kernel"));
  e.kernel_id = j.value("kernel_id", "");
  e.config = ConfigFromJson(j.at("config"));
  e.speedup = j.value("speedup", 0.0);
  e.time_ms = j.value("time_ms", 0.0);
  e.origin = j.value("origin", "");
  e.mutations = j.value("mutations", std::vector<std::string>{});
  e.device = j.value("device", "");
  if (j.contains("evaluation")) e.evaluation = EvaluationFromJson(j["evaluation"]);
  return e;
}

nlohmann::json TaskToJson(const Task& t, std::optional<Language> with_reference) {
  nlohmann::json languages = nlohmann::json::array(), reference = nlohmann::json::object(),
                 baseline = nlohmann::json::object(), templates = nlohmann::json::object();
  for (Language l : t.Languages()) languages.push_back(LanguageName(l));
  for (const auto& [l, f] : t.reference) reference[std::string(LanguageName(l))] = f;
  for (const auto& [l, f] : t.baseline) baseline[std::string(LanguageName(l))] = f;
  for (const auto& [l, fs] : t.templates) templates[std::string(LanguageName(l))] = fs;
  nlohmann::json args = nlohmann::json::array();
  for (const ArgSpec& a : t.args) {
    nlohmann::json arg = {{"name", a.name},
                          {"kind", a.is_buffer ? "buffer" : "scalar"},
                          {"dtype", DTypeName(a.dtype)}};
    if (a.is_buffer) {
      nlohmann::json shape = nlohmann::json::array();
      for (const Expr& e : a.shape) shape.push_back(e.text());
      arg["shape"] = shape;
      arg["role"] = RoleName(a.role);
    } else {
      arg["value"] = a.value.text();
    }
    args.push_back(arg);
  }
  nlohmann::json out = {{"name", t.name},
                        {"path", t.dir},
                        {"op_class", t.op_class},
                        {"description", t.description},
                        {"languages", languages},
                        {"reference", reference},
                        {"baseline", baseline},
                        {"templates", templates},
                        {"sizes", t.size_names},
                        {"args", args},
                        {"check_sizes", SizeSetsJson(t.check_sizes)},
                        {"bench_sizes", SizeSetsJson(t.bench_sizes)},
                        {"tolerance",
                         {{"atol", t.tolerance.atol.text()},
                          {"rtol", t.tolerance.rtol.text()},
                          {"max_bad_ratio", t.tolerance.max_bad_ratio}}},
                        {"min_bytes", t.min_bytes.text()},
                        {"flops", t.flops ? nlohmann::json(t.flops->text()) : nullptr},
                        {"variants", t.variants}};
  if (!t.variant.empty()) {  // a variant: its name and the macros its kernels are compiled with
    out["variant"] = t.variant;
    out["defines"] = t.defines;
  }
  if (with_reference) {
    auto it = t.reference.find(*with_reference);
    if (it != t.reference.end()) {
      out["reference_source"] = ReadText(t.PathOf(it->second));
    } else if (!t.torch_reference.empty()) {  // no kernel for the language: the PyTorch module
      out["reference_source"] = ReadText(t.PathOf(t.torch_reference));
      out["reference_language"] = "python";
    }
  }
  return out;
}

nlohmann::json ProposalRequestToJson(const ProposalRequest& r, const Task* task) {
  nlohmann::json inspirations = nlohmann::json::array();
  for (const Elite& e : r.inspirations) inspirations.push_back(EliteToJson(e));
  nlohmann::json target = nullptr;
  if (r.target) {
    target = {{"cell", r.target->cell},
              {"description", r.target->description},
              {"speedup", r.target->speedup > 0 ? nlohmann::json(r.target->speedup) : nullptr}};
  }
  nlohmann::json behaviour = nlohmann::json::array();
  for (const auto& [name, levels] : r.behaviour)
    behaviour.push_back({{"name", name}, {"levels", levels}});
  return {{"index", r.index},
          {"seed", r.seed},
          {"language", LanguageName(r.language)},
          {"task_id", r.task_id},
          {"task", task ? TaskToJson(*task, r.language) : nlohmann::json(nullptr)},
          {"device", DeviceInfoToJson(r.device)},
          {"peak_bandwidth_gbs", r.peak_bandwidth_gbs},
          {"rule_hints", r.rule_hints},
          {"parent", r.parent ? EliteToJson(*r.parent) : nlohmann::json(nullptr)},
          {"best", r.best ? EliteToJson(*r.best) : nlohmann::json(nullptr)},
          {"inspirations", inspirations},
          {"target_cell", target},
          {"filled_cells", r.filled_cells},
          {"behaviour", behaviour}};
}

ProposalRequest ProposalRequestFromJson(const nlohmann::json& j) {
  ProposalRequest r;
  r.index = j.at("index").get<int>();
  r.seed = j.at("seed").get<uint64_t>();
  r.task_id = j.value("task_id", "");
  r.language = j.at("language").get<std::string>() == "cuda" ? Language::kCuda : Language::kOpenCL;
  r.device = DeviceInfoFromJson(j.at("device"));
  r.peak_bandwidth_gbs = j.value("peak_bandwidth_gbs", 0.0);
  r.rule_hints = j.value("rule_hints", std::vector<std::string>{});
  if (j.contains("parent") && !j["parent"].is_null()) r.parent = EliteFromJson(j["parent"]);
  if (j.contains("best") && !j["best"].is_null()) r.best = EliteFromJson(j["best"]);
  for (const auto& e : j.value("inspirations", nlohmann::json::array()))
    r.inspirations.push_back(EliteFromJson(e));
  if (j.contains("target_cell") && !j["target_cell"].is_null()) {
    const nlohmann::json& t = j["target_cell"];
    TargetCell target;
    target.cell = t.at("cell").get<Cell>();
    target.description = t.value("description", "");
    if (t.contains("speedup") && t["speedup"].is_number()) target.speedup = t["speedup"];
    r.target = target;
  }
  r.filled_cells = j.value("filled_cells", std::vector<Cell>{});
  for (const auto& d : j.value("behaviour", nlohmann::json::array()))
    r.behaviour.emplace_back(d.at("name").get<std::string>(),
                             d.at("levels").get<std::vector<std::string>>());
  return r;
}

nlohmann::json ProposalToJson(const Proposal& p) {
  return {{"kernel", KernelToJson(p.kernel)},
          {"origin", p.origin},
          {"parent_kernel_id", p.parent_kernel_id},
          {"parent_cell", p.parent_cell ? nlohmann::json(*p.parent_cell) : nullptr},
          {"mutations", p.mutations},
          {"notes", p.notes}};
}

Proposal ProposalFromJson(const nlohmann::json& j) {
  Proposal p;
  p.kernel = KernelFromJson(j.at("kernel"));
  p.origin = j.value("origin", "");
  p.parent_kernel_id = j.value("parent_kernel_id", "");
  if (j.contains("parent_cell") && j["parent_cell"].is_array())
    p.parent_cell = j["parent_cell"].get<Cell>();
  p.mutations = j.value("mutations", std::vector<std::string>{});
  p.notes = j.value("notes", "");
  return p;
}

nlohmann::json RunReplyToJson(const RunReply& r) {
  nlohmann::json out = {{"evaluation", EvaluationToJson(r.evaluation)}};
  if (!r.key.empty()) out["key"] = r.key;
  if (!r.listing.empty()) out["listing"] = r.listing;
  if (!r.tool_error.empty()) out["tool_error"] = r.tool_error;
  if (r.runner >= 0) out["runner"] = r.runner;
  if (r.cancelled) out["cancelled"] = true;
  return out;
}

RunReply RunReplyFromJson(const nlohmann::json& j) {
  RunReply r;
  r.key = j.value("key", "");
  r.evaluation = EvaluationFromJson(j.at("evaluation"));
  r.listing = j.value("listing", "");
  r.tool_error = j.value("tool_error", "");
  r.runner = j.value("runner", -1);
  r.cancelled = j.value("cancelled", false);
  return r;
}

nlohmann::json ProposalOutcomeToJson(const ProposalOutcome& o) {
  return {{"verdict", ProposalVerdictName(o.verdict)},
          {"reason", o.reason},
          {"proposal", o.proposal ? ProposalToJson(*o.proposal) : nlohmann::json(nullptr)},
          {"trail", o.trail}};
}

ProposalOutcome ProposalOutcomeFromJson(const nlohmann::json& j) {
  ProposalOutcome o;
  std::string verdict = j.at("verdict").get<std::string>();
  std::optional<ProposalVerdict> v = ParseProposalVerdict(verdict);
  if (!v)
    throw nlohmann::json::other_error::create(501, "unknown proposal verdict '" + verdict + "'",
                                              &j);
  o.verdict = *v;
  o.reason = j.value("reason", "");
  if (j.contains("proposal") && !j["proposal"].is_null())
    o.proposal = ProposalFromJson(j["proposal"]);
  if (o.verdict == ProposalVerdict::kOk && !o.proposal)
    throw nlohmann::json::other_error::create(501, "an ok proposal outcome has no proposal", &j);
  o.trail = j.value("trail", nlohmann::json::object());
  return o;
}

nlohmann::json SearchEvaluationToJson(const SearchEvaluation& e) {
  return {{"proposal", e.proposal},
          {"kernel", KernelToJson(e.kernel)},
          {"kernel_id", e.kernel_id},
          {"origin", e.origin},
          {"key", e.key},
          {"config", ConfigToJson(e.config)},
          {"evaluation", EvaluationToJson(e.evaluation)},
          {"from_store", e.from_store}};
}

SearchEvaluation SearchEvaluationFromJson(const nlohmann::json& j) {
  SearchEvaluation e;
  e.proposal = j.at("proposal").get<int>();
  e.kernel = KernelFromJson(j.at("kernel"));
  e.kernel_id = j.at("kernel_id").get<std::string>();
  e.origin = j.value("origin", "");
  e.key = j.at("key").get<std::string>();
  e.config = ConfigFromJson(j.at("config"));
  e.evaluation = EvaluationFromJson(j.at("evaluation"));
  e.from_store = j.value("from_store", false);
  return e;
}

std::optional<ProposalVerdict> ParseProposalVerdict(std::string_view name) {
  for (ProposalVerdict v :
       {ProposalVerdict::kOk, ProposalVerdict::kNothingNew, ProposalVerdict::kBadReply})
    if (ProposalVerdictName(v) == name) return v;
  return std::nullopt;
}

std::string_view ProposalVerdictName(ProposalVerdict v) {
  switch (v) {
    case ProposalVerdict::kOk: return "ok";
    case ProposalVerdict::kNothingNew: return "nothing_new";
    case ProposalVerdict::kBadReply: return "bad_reply";
  }
  return "?";
}

std::string_view ProposalStateName(ProposalState s) {
  switch (s) {
    case ProposalState::kIssued: return "issued";
    case ProposalState::kProposed: return "proposed";
    case ProposalState::kDone: return "done";
    case ProposalState::kNothingNew: return "nothing_new";
    case ProposalState::kBadReply: return "bad_reply";
    case ProposalState::kAbandoned: return "abandoned";
  }
  return "?";
}

std::optional<ProposalState> ParseProposalState(std::string_view name) {
  for (ProposalState s :
       {ProposalState::kIssued, ProposalState::kProposed, ProposalState::kDone,
        ProposalState::kNothingNew, ProposalState::kBadReply, ProposalState::kAbandoned})
    if (ProposalStateName(s) == name) return s;
  return std::nullopt;
}

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string Base64Encode(const std::vector<std::byte>& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (std::to_integer<uint32_t>(bytes[i]) << 16) |
                 (std::to_integer<uint32_t>(bytes[i + 1]) << 8) |
                 std::to_integer<uint32_t>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (size_t left = bytes.size() - i; left > 0) {
    uint32_t v = std::to_integer<uint32_t>(bytes[i]) << 16;
    if (left == 2) v |= std::to_integer<uint32_t>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(left == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::vector<std::byte> Base64Decode(const std::string& text) {
  std::vector<std::byte> out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const char* at = std::char_traits<char>::find(kAlphabet, 64, c);
    if (!at) throw std::invalid_argument("not base64");
    acc = (acc << 6) | static_cast<uint32_t>(at - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::byte>((acc >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace kf
