// The core codecs: every value type that crosses a stage survives its JSON round trip exactly
// (the executor and builder pipes carry nothing else), and base64 carries any bytes.
#include "core/codec.hpp"

#include <gtest/gtest.h>

#include <random>

#include "core/task.hpp"

namespace kf {
namespace {

const char* kKernel =
    "// @kernel f\n// @grid ceil_div(N, BLOCK)\n// @block BLOCK\n"
    "// @param BLOCK in [64, 128] default 128\n"
    "__kernel void f(__global float* x, int N) { x[get_global_id(0)] = 1; }\n";

TEST(Codec, Base64CarriesAnyBytes) {
  std::mt19937 rng(3);
  for (size_t n : {0u, 1u, 2u, 3u, 4u, 5u, 1000u}) {
    std::vector<std::byte> bytes(n);
    for (auto& b : bytes) b = static_cast<std::byte>(rng() & 0xff);
    std::string text = Base64Encode(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    EXPECT_EQ(Base64Decode(text), bytes) << n;
  }
  EXPECT_EQ(Base64Encode({std::byte{'M'}, std::byte{'a'}}), "TWE=");
  EXPECT_THROW(Base64Decode("T*E="), std::invalid_argument);
}

TEST(Codec, CompileResultsAndRunRequestsRoundTrip) {
  CompileResult c;
  c.ok = true;
  c.log = "1 warning";
  c.cache_hit = true;
  c.artifact.symbols = {"_Z1fPf", "_Z1gPf"};
  c.artifact.listing = "ld.global.v4.f32";
  for (int i = 0; i < 256; ++i) c.artifact.binary.push_back(static_cast<std::byte>(i));
  CompileResult back = CompileResultFromJson(nlohmann::json::parse(CompileResultToJson(c).dump()));
  EXPECT_EQ(back.ok, c.ok);
  EXPECT_EQ(back.log, c.log);
  EXPECT_EQ(back.cache_hit, c.cache_hit);
  EXPECT_EQ(back.artifact.symbols, c.artifact.symbols);
  EXPECT_EQ(back.artifact.listing, c.artifact.listing);
  EXPECT_EQ(back.artifact.binary, c.artifact.binary);

  CompileRequest q{"source", {"f", "g"}, {{"BLOCK", "64"}, {"VEC", "4"}}};
  CompileRequest q2 = CompileRequestFromJson(CompileRequestToJson(q));
  EXPECT_EQ(q2.source, q.source);
  EXPECT_EQ(q2.entries, q.entries);
  EXPECT_EQ(q2.defines, q.defines);

  RunRequest r{{ParseKernel("k.cl", kKernel), {{"BLOCK", "64"}}}, c};
  RunRequest r2 = RunRequestFromJson(nlohmann::json::parse(RunRequestToJson(r).dump()));
  EXPECT_EQ(r2.candidate.kernel.source, kKernel);
  EXPECT_EQ(r2.candidate.kernel.launches.at(0).entry, "f");
  EXPECT_EQ(r2.candidate.config, r.candidate.config);
  ASSERT_TRUE(r2.compiled);
  EXPECT_EQ(r2.compiled->artifact.binary, c.artifact.binary);
  RunRequest plain{{ParseKernel("k.cl", kKernel), {}}, std::nullopt};
  EXPECT_FALSE(RunRequestFromJson(RunRequestToJson(plain)).compiled);
  EXPECT_FALSE(RunRequestFromJson(RunRequestToJson(plain)).candidate.settings);

  // How thoroughly to judge travels with the candidate.
  EvalSettings fast = EvalSettings::Fast();
  fast.time_to_beat_ms = 0.17;
  fast.check_on = "host";
  RunRequest judged{{ParseKernel("k.cl", kKernel), {}, fast}, std::nullopt};
  RunRequest settled = RunRequestFromJson(nlohmann::json::parse(RunRequestToJson(judged).dump()));
  ASSERT_TRUE(settled.candidate.settings);
  EXPECT_EQ(EvalSettingsToJson(*settled.candidate.settings), EvalSettingsToJson(fast));
  EXPECT_FALSE(settled.candidate.settings->interleave_baseline);
  EXPECT_EQ(settled.candidate.settings->check_on, "host");
  // A settings object that names nothing is the thorough default.
  EXPECT_EQ(EvalSettingsToJson(EvalSettingsFromJson(nlohmann::json::object())),
            EvalSettingsToJson(EvalSettings::Thorough()));
}

// The dynamic shared memory of a CUDA kernel (@shared) is part of its launch rule: it reaches the
// executor inside the kernel's source and comes back out of the codec as the same expression.
TEST(Codec, ACudaKernelsDynamicSharedMemoryTravelsWithItsLaunchRule) {
  const std::string source =
      "// @kernel g\n// @grid ceil_div(N, BN)\n// @block 256\n"
      "// @shared STAGES * BN * 128 + 1024\n"
      "// @param BN in [128, 256] default 256\n// @param STAGES in [3, 4] default 4\n"
      "extern \"C\" __global__ void g(float* x, int N) {\n"
      "  extern __shared__ __align__(16) unsigned char smem[];\n}\n";
  RunRequest r{{ParseKernel("dir/g.cu", source), {{"STAGES", "3"}}}, std::nullopt};
  RunRequest r2 = RunRequestFromJson(nlohmann::json::parse(RunRequestToJson(r).dump()));
  const Kernel& k = r2.candidate.kernel;
  EXPECT_EQ(k.language, Language::kCuda);
  ASSERT_TRUE(k.launches.at(0).shared);
  EXPECT_EQ(k.launches.at(0).shared->text(), "STAGES * BN * 128 + 1024");
  EXPECT_EQ(k.launches.at(0).shared_line, 4);
  EXPECT_EQ(r2.candidate.config, r.candidate.config);
  Env env;
  env.Set("N", 4096);
  BindConfig(r2.candidate.config, env);
  BindConfig({{"BN", "256"}}, env);
  EXPECT_EQ(k.launches.at(0).shared->EvalInt(env), 3 * 256 * 128 + 1024);
  // An elite and a proposal carry it the same way.
  Elite e;
  e.kernel = r.candidate.kernel;
  Elite e2 = EliteFromJson(nlohmann::json::parse(EliteToJson(e).dump()));
  ASSERT_TRUE(e2.kernel.launches.at(0).shared);
  EXPECT_EQ(e2.kernel.launches.at(0).shared->text(), k.launches.at(0).shared->text());
  Proposal p;
  p.kernel = r.candidate.kernel;
  ASSERT_TRUE(ProposalFromJson(ProposalToJson(p)).kernel.launches.at(0).shared);
  // A kernel without it decodes without it.
  EXPECT_FALSE(KernelFromJson(KernelToJson(ParseKernel("k.cl", kKernel))).launches.at(0).shared);
}

TEST(Codec, DevicesEvaluationsElitesAndProposalsRoundTrip) {
  DeviceInfo d;
  d.backend = "cuda";
  d.index = 1;
  d.name = "NVIDIA H200";
  d.vendor = "NVIDIA";
  d.arch = "sm_90";
  d.driver_version = "580.1";
  d.compiler_version = "nvrtc 13.0";
  d.device_class = DeviceClass::kGpu;
  d.compute_units = 132;
  d.max_work_group_size = 1024;
  d.local_mem_bytes = 232448;
  d.sub_group_width = 32;
  d.global_mem_bytes = 150000000000;
  d.cache_bytes = 62914560;
  d.spec_bandwidth_gbs = 4800;
  DeviceInfo d2 = DeviceInfoFromJson(nlohmann::json::parse(DeviceInfoToJson(d).dump()));
  EXPECT_EQ(DeviceInfoToJson(d2), DeviceInfoToJson(d));
  EXPECT_EQ(d2.Label(), "cuda:1 (NVIDIA H200)");
  EXPECT_EQ(d2.device_class, DeviceClass::kGpu);

  Evaluation ev;
  ev.status = Status::kOk;
  ev.device = d.Label();
  ev.config = {{"BLOCK", "128"}, {"MODE", "fast"}};
  ev.time = TimingStats{0.17, 0.16, 0.2, 50};
  ev.speedup = 3.2;
  ev.descriptor = {1, 2, 0};
  ev.check_seeds = {1, 2};
  ev.gflops = 640.5;
  ev.compute_fraction = 0.65;
  ev.external_baselines = {
      {"torch eager", "cpu (PyTorch 1.13.0, 2 threads)", TimingStats{0.5, 0.4, 0.7, 12}, 2.9, ""},
      {"torch.compile", "cpu", std::nullopt, std::nullopt, "not here"}};
  EXPECT_EQ(EvaluationToJson(EvaluationFromJson(EvaluationToJson(ev))), EvaluationToJson(ev));
  EXPECT_EQ(EvaluationFromJson(EvaluationToJson(ev)).compute_fraction, 0.65);
  EXPECT_EQ(EvaluationFromJson(EvaluationToJson(ev)).external_baselines[1].unavailable, "not here");

  Elite e;
  e.cell = {1, 2, 0};
  e.kernel = ParseKernel("dir/k.cl", kKernel);
  e.kernel_id = "k123";
  e.config = {{"BLOCK", "64"}};
  e.speedup = 3.2;
  e.time_ms = 0.17;
  e.origin = "unroll of k.cl";
  e.mutations = {"unroll"};
  e.device = d.Label();
  e.evaluation = ev;
  EXPECT_EQ(EliteToJson(EliteFromJson(EliteToJson(e))), EliteToJson(e));

  Proposal p;
  p.kernel = ParseKernel("dir/p.cl", kKernel);
  p.origin = "command p.cl";
  p.parent_kernel_id = "k123";
  p.parent_cell = Cell{1, 2, 0};
  p.mutations = {"unroll", "command"};
  p.notes = "wider loads";
  EXPECT_EQ(ProposalToJson(ProposalFromJson(ProposalToJson(p))), ProposalToJson(p));
}

TEST(Codec, AProposalRequestCarriesTheTaskTheParentAndTheTarget) {
  Task task = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  ProposalRequest r;
  r.index = 7;
  r.seed = 99;
  r.task_id = task.id;
  r.language = Language::kOpenCL;
  r.device.backend = "opencl";
  r.rule_hints = {"use vector loads"};
  Elite parent;
  parent.cell = {0, 0, 0};
  parent.kernel = LoadKernelFile(task.PathOf("baseline.cl"));
  parent.config = parent.kernel.ResolveConfig({});
  r.parent = parent;
  r.target = TargetCell{{1, 0, 0}, "memory: vectorised", 0};
  r.filled_cells = {{0, 0, 0}};
  r.behaviour = {{"memory", {"scalar", "vectorised"}}, {"algorithm", {"direct", "tiled"}}};
  nlohmann::json j = ProposalRequestToJson(r, &task);
  EXPECT_EQ(j["index"], 7);
  EXPECT_EQ(j["task_id"], task.id);
  EXPECT_EQ(j["language"], "opencl");
  EXPECT_EQ(j["task"]["name"], "rope_llama3");
  EXPECT_FALSE(j["task"]["args"].empty());
  EXPECT_NE(j["task"]["reference_source"].get<std::string>().find("__kernel"), std::string::npos);
  EXPECT_EQ(j["parent"]["kernel"]["source"], parent.kernel.source);
  EXPECT_EQ(j["target_cell"]["cell"], nlohmann::json::array({1, 0, 0}));
  EXPECT_TRUE(j["target_cell"]["speedup"].is_null()) << "an empty cell has no speedup yet";
  EXPECT_EQ(j["rule_hints"][0], "use vector loads");

  // Decoded, it is the same request: the task by its id (a proposer holds the task itself).
  ProposalRequest back = ProposalRequestFromJson(j);
  EXPECT_EQ(back.task_id, task.id);
  EXPECT_EQ(back.behaviour, r.behaviour);
  ASSERT_TRUE(back.parent.has_value());
  EXPECT_EQ(back.parent->kernel.source, parent.kernel.source);
  EXPECT_EQ(ProposalRequestToJson(back), ProposalRequestToJson(r));
  EXPECT_TRUE(ProposalRequestToJson(r)["task"].is_null());
}

TEST(Codec, ProposalOutcomesRoundTripAndAnOkOneNeedsItsProposal) {
  Proposal p;
  p.kernel = ParseKernel("dir/p.cl", kKernel);
  p.origin = "command p.cl";
  ProposalOutcome ok = ProposalOutcome::Ok(p);
  ok.trail = {{"model", "m"}, {"tokens", 12}};
  EXPECT_EQ(ProposalOutcomeToJson(ProposalOutcomeFromJson(ProposalOutcomeToJson(ok))),
            ProposalOutcomeToJson(ok));
  ProposalOutcome bad = ProposalOutcome::BadReply("no code block");
  ProposalOutcome back = ProposalOutcomeFromJson(ProposalOutcomeToJson(bad));
  EXPECT_EQ(back.verdict, ProposalVerdict::kBadReply);
  EXPECT_EQ(back.reason, "no code block");
  EXPECT_FALSE(back.proposal.has_value());

  nlohmann::json broken = ProposalOutcomeToJson(ok);
  broken["proposal"] = nullptr;
  EXPECT_THROW(ProposalOutcomeFromJson(broken), nlohmann::json::exception);
  broken = ProposalOutcomeToJson(bad);
  broken["verdict"] = "maybe";
  EXPECT_THROW(ProposalOutcomeFromJson(broken), nlohmann::json::exception);
}

TEST(Codec, RunRepliesCarryTheirCandidatesKey) {
  RunReply r;
  r.key = "e0123";
  r.evaluation.status = Status::kIncorrect;
  r.evaluation.reason = "element 3";
  r.listing = "ld.global.v4.f32";
  r.runner = 1;
  RunReply back = RunReplyFromJson(RunReplyToJson(r));
  EXPECT_EQ(back.key, "e0123");
  EXPECT_EQ(back.evaluation.status, Status::kIncorrect);
  EXPECT_EQ(back.listing, r.listing);
  EXPECT_EQ(back.runner, 1);
  EXPECT_FALSE(back.cancelled);
  EXPECT_EQ(RunReplyToJson(back), RunReplyToJson(r));
  RunReply cancelled;
  cancelled.cancelled = true;
  EXPECT_TRUE(RunReplyFromJson(RunReplyToJson(cancelled)).cancelled);

  RunRequest request{{ParseKernel("dir/p.cl", kKernel), {}, std::nullopt, "e0123"}, std::nullopt};
  EXPECT_EQ(RunRequestFromJson(RunRequestToJson(request)).candidate.key, "e0123");
}

TEST(Codec, ASearchEvaluationOwnsItsKernel) {
  SearchEvaluation e;
  e.proposal = 4;
  e.kernel = ParseKernel("dir/p.cl", kKernel);
  e.kernel_id = "k1";
  e.origin = "unroll of p.cl";
  e.key = "e1";
  e.evaluation.status = Status::kOk;
  e.evaluation.speedup = 1.5;
  nlohmann::json j = SearchEvaluationToJson(e);
  SearchEvaluation back = SearchEvaluationFromJson(j);
  EXPECT_EQ(back.kernel.source, e.kernel.source);
  EXPECT_EQ(back.key, "e1");
  EXPECT_EQ(SearchEvaluationToJson(back), j);
}

TEST(Codec, ProposalStatesHaveTheirStoredNames) {
  for (ProposalState s :
       {ProposalState::kIssued, ProposalState::kProposed, ProposalState::kDone,
        ProposalState::kNothingNew, ProposalState::kBadReply, ProposalState::kAbandoned})
    EXPECT_EQ(ParseProposalState(ProposalStateName(s)), s);
  EXPECT_EQ(ProposalStateName(ProposalState::kNothingNew), "nothing_new");
  EXPECT_FALSE(ParseProposalState("finished").has_value());
}

}  // namespace
}  // namespace kf
