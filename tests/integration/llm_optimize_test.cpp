// `kfoundry optimize --proposer llm` on PoCL against the scripted chat server on loopback: every
// kind of reply (good kernels, a template with @param, SEARCH/REPLACE edits, broken code, no code
// block, a reply cut off, 429 with Retry-After, 500, a reply slower than the deadline, a meta-step
// rewrite) gets its verdict, retries stay within their bound, the archive improves, the meta step
// stores new component versions, and the API key is nowhere in the store or the output; with
// eight proposals in flight the server sees eight requests at once.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "chat_server_process.hpp"
#include "kf_process.hpp"
#include "store/store.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::ReadText;
using testing::RunKfoundry;
using testing::ScriptedChatServer;

std::string Scratch(const std::string& name) {
  return testing::Scratch("llm", name);
}

std::string Task(const std::string& file) {
  return ReadText(std::string(KF_TASKS) + "/rope_llama3/" + file);
}

// A model's answer: a sentence, then the kernel in a fenced block.
nlohmann::json Kernel(const std::string& file) {
  return testing::Reply("I changed the memory access pattern.\n```c\n" + Task(file) + "```\n");
}

// The meta step's answer: its first line of the component's text, kept, with a sentence added.
nlohmann::json MetaRewrite() {
  return {{"echo",
           {{"pattern", "```\\n([^\\n]+)"},
            {"template",
             "<<<<<<< SEARCH\n{1}\n=======\n{1} Check every index against the sizes "
             "first.\n>>>>>>> REPLACE\n"}}}};
}

constexpr const char* kKey = "sk-test-SECRET-4242";

bool FileHas(const std::string& path, const std::string& text) {
  return fs::exists(path) && ReadText(path).find(text) != std::string::npos;
}

TEST(LlmOptimize, EveryScriptedReplyGetsAVerdictAndTheArchiveImproves) {
  std::string dir = Scratch("script");
  nlohmann::json cut = {{"content", "Here it is:\n```c\n// @kernel rope_x\n// @grid ceil_"},
                        {"finish_reason", "length"}};
  nlohmann::json broken = testing::Reply(
      "```c\n// @kernel rope_broken\n// @grid ceil_div(B * S * (Hq + Hkv) * (D // 2), BLOCK)\n"
      "// @block BLOCK\n// @param BLOCK in [64, 128] default 64\n__kernel void rope_broken(int "
      "x) { this is not C; }\n```\n");
  nlohmann::json edit = testing::Reply(
      "One more note in the header.\n<<<<<<< SEARCH\n// @block BLOCK\n=======\n// @block "
      "BLOCK\n// (the model edited this line)\n>>>>>>> REPLACE\n");
  nlohmann::json slow = Kernel("rope_elem.cl");
  slow["delay_s"] = 3;
  nlohmann::json last = Kernel("rope_heads.cl");
  last["cycle"] = true;
  nlohmann::json script = {
      {"api_key", kKey},
      {"rules", {{{"when_contains", "does worst"}, {"reply", MetaRewrite()}}}},
      {"replies",
       {Kernel("rope_vec4.cl"),                           // 0  a good kernel
        Kernel("rope_vec8.cl"),                           // 1  a template with @param
        edit,                                             // 2  SEARCH/REPLACE against the parent
        broken,                                           // 3  compiles to an error
        testing::Reply("Vectorise the loads, I would."),  // 4  no code block: repaired by 5
        Kernel("rope_lds.cl"),                            // 5
        cut,                                              // 6  cut off, and again on repair: bad
        cut,                                              // 7
        {{"status", 429}, {"retry_after", 1}},            // 8  retried after 1 s: 9
        Kernel("rope_prefetch.cl"),                       // 9
        {{"status", 500}},                                // 10 retried: 11
        Kernel("rope_elem.cl"),                           // 11
        slow,                                             // 12 past the deadline: retried, 13
        last}}};                                          // 13 then from the start again
  ScriptedChatServer server(script, dir + "/server");
  testing::KfResult r = RunKfoundry(
      fmt::format("optimize rope_llama3 --device opencl --budget 30 --tune-budget 2 --top 1 "
                  "--repeats 1 --store sqlite:{0}/kf.db --out {0}/out --run llm --json "
                  "--proposer llm --llm-base-url {1} --llm-model scripted-coder --llm-timeout 2 "
                  "--llm-retries 2 --meta-every 3 --meta-min-uses 1",
                  dir, server.base_url()),
      fmt::format("KFOUNDRY_LLM_API_KEY={}", kKey));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(r.json.is_discarded()) << r.out;

  auto store = OpenStore(dir + "/kf.db");
  std::vector<ProposalRecord> proposals = store->RunProposals("llm");
  std::map<std::string, int> states;
  std::string reasons;
  bool repaired = false, edited = false;
  for (const ProposalRecord& p : proposals) {
    ++states[std::string(ProposalStateName(p.state))];
    EXPECT_TRUE(p.Final()) << "proposal " << p.index << " left " << ProposalStateName(p.state);
    reasons += p.outcome.value("reason", "") + "\n";
    if (p.index == 0 || p.state == ProposalState::kAbandoned)
      continue;  // the baseline; never answered
    if (p.request.value("by", "") == "deepen") {
      // Once the script's replies repeat, the search tunes its elites deeper: no prompt.
      EXPECT_TRUE(!p.proposal || p.proposal->origin.rfind("deeper tuning of ", 0) == 0)
          << "proposal " << p.index;
      continue;
    }
    const nlohmann::json trail = p.outcome.value("proposer", nlohmann::json::object());
    EXPECT_TRUE(trail.contains("messages"))
        << "proposal " << p.index << " (" << ProposalStateName(p.state) << ") kept no prompt";
    EXPECT_GE(trail["exchanges"].size(), 1u);
    for (const auto& e : trail["exchanges"])
      EXPECT_LE(e["attempts"].get<int>(), 3) << "more than --llm-retries 2 retries";
    repaired = repaired || trail.value("repaired", false);
    if (p.proposal &&
        p.proposal->kernel.source.find("the model edited this line") != std::string::npos)
      edited = true;
  }
  EXPECT_GE(states["done"], 5) << reasons;
  EXPECT_GE(states["bad_reply"], 1) << reasons;
  EXPECT_NE(reasons.find("cut off"), std::string::npos) << reasons;
  EXPECT_TRUE(repaired) << "the reply without a code block should have been repaired";
  EXPECT_TRUE(edited) << "the SEARCH/REPLACE reply should have made a kernel";
  EXPECT_GE(r.json["totals"]["verdicts"].value("compile_error", 0), 1) << r.json["totals"];

  // The archive improved on the baseline with a kernel the model wrote.
  ASSERT_TRUE(r.json["best"].is_object()) << r.err;
  EXPECT_GT(r.json["best"]["speedup"].get<double>(), 1.0);
  // (written by the model, or the model's kernel tuned deeper once the replies repeated)
  const std::string origin = r.json["best"]["origin"].get<std::string>();
  EXPECT_TRUE(origin.rfind("llm ", 0) == 0 || origin.rfind("deeper tuning of llm ", 0) == 0)
      << origin;

  // Retries: the 429, the 500 and the slow reply were each retried, and within the bound.
  std::vector<nlohmann::json> log = server.Log();
  int throttled = 0, failed = 0;
  for (const nlohmann::json& e : log) {
    throttled += e["status"] == 429;
    failed += e["status"] == 500;
    EXPECT_EQ(e["auth_ok"], true) << "the key from KFOUNDRY_LLM_API_KEY is sent";
  }
  // (the script starts again when it runs out: each pass throttles once and fails once)
  EXPECT_GE(throttled, 1);
  EXPECT_GE(failed, 1);
  EXPECT_EQ(reasons.find("HTTP 429"), std::string::npos) << "a 429 retried should not be lost";
  EXPECT_EQ(reasons.find("HTTP 500"), std::string::npos) << "a 500 retried should not be lost";
  // Every attempt the server saw is accounted for in the proposals' trails.
  int attempts = 0;
  for (const ProposalRecord& p : proposals) {
    const nlohmann::json trail = p.outcome.value("proposer", nlohmann::json::object());
    for (const auto& e : trail.value("exchanges", nlohmann::json::array()))
      attempts += e["attempts"].get<int>();
    if (trail.contains("meta"))
      for (const auto& e : trail["meta"].value("exchanges", nlohmann::json::array()))
        attempts += e["attempts"].get<int>();
  }
  EXPECT_EQ(attempts, static_cast<int>(log.size()));

  // The meta step rewrote a component: a stored version with its parent and how it was made.
  int meta = 0;
  for (const PromptVersionRecord& v : store->RunPromptVersions("llm")) {
    if (v.made_by != "meta") continue;
    ++meta;
    EXPECT_EQ(v.parent_version, v.version - 1);
    EXPECT_NE(v.text.find("Check every index against the sizes first."), std::string::npos);
    EXPECT_FALSE(v.meta.value("prompt", "").empty());
  }
  EXPECT_GE(meta, 1) << "no component version made by the meta step";
  // ... and a chain: a version the meta step made from one it had made before.
  std::set<std::pair<std::string, int>> by_meta;
  for (const PromptVersionRecord& v : store->RunPromptVersions("llm"))
    if (v.made_by == "meta") by_meta.insert({v.component, v.version});
  bool chain = false;
  for (const auto& [component, version] : by_meta)
    chain = chain || by_meta.count({component, version - 1});
  EXPECT_TRUE(chain) << "no component was rewritten twice by the meta step";
  EXPECT_EQ(r.json["llm"]["meta_versions"].get<int>(), meta);

  // The key is nowhere: not in the store, not in what was printed.
  store.reset();
  for (const char* f : {"/kf.db", "/kf.db-wal"})
    EXPECT_FALSE(FileHas(dir + f, kKey)) << f << " holds the API key";
  EXPECT_EQ(r.out.find(kKey), std::string::npos);
  EXPECT_EQ(r.err.find(kKey), std::string::npos);
}

TEST(LlmOptimize, AWrongKeyIsABadReplyThatNeverShowsTheKey) {
  std::string dir = Scratch("wrong-key");
  // The server echoes the key it was given in its 401, as OpenAI's does.
  ScriptedChatServer server({{"api_key", "sk-right"}, {"default", Kernel("rope_vec4.cl")}},
                            dir + "/server");
  const std::string wrong = "sk-wrong-KEY-0000";
  testing::KfResult r = RunKfoundry(
      fmt::format("optimize rope_llama3 --device opencl --budget 4 --tune-budget 1 --top 1 "
                  "--repeats 1 --store sqlite:{0}/kf.db --out {0}/out --run k --json "
                  "--proposer llm --llm-base-url {1} --llm-model m --llm-api-key {2} --no-meta",
                  dir, server.base_url(), wrong));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(r.json["totals"]["proposal_states"].value("bad_reply", 0), 1) << r.out;
  EXPECT_NE(r.out.find("401"), std::string::npos) << "the reason names the HTTP status";
  EXPECT_EQ(r.out.find(wrong), std::string::npos);
  EXPECT_EQ(r.err.find(wrong), std::string::npos);
  for (const char* f : {"/kf.db", "/kf.db-wal"})
    EXPECT_FALSE(FileHas(dir + f, wrong)) << f << " holds the API key";
}

TEST(LlmOptimize, EightProposalsInFlightAreEightRequestsAtOnce) {
  std::string dir = Scratch("in-flight");
  // Each reply takes three seconds and is a kernel of its own (the request number in a
  // comment). Three, not one: on a loaded machine (ctest -j2 beside heavier tests) the first
  // one-second reply was once back before the eighth request had gone out.
  nlohmann::json reply =
      testing::Reply("```c\n// variant @@N@@\n" + Task("rope_vec4.cl") + "```\n");
  reply["substitute"] = true;
  reply["delay_s"] = 3;
  ScriptedChatServer server({{"default", reply}}, dir + "/server");
  testing::KfResult r = RunKfoundry(
      fmt::format("optimize rope_llama3 --device opencl --budget 24 --tune-budget 1 --top 1 "
                  "--repeats 1 --store sqlite:{0}/kf.db --out {0}/out --run f --json "
                  "--proposer llm --llm-base-url {1} --llm-model m --in-flight 8 --no-meta",
                  dir, server.base_url()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json["evaluations"], 24);
  EXPECT_EQ(server.MaxConcurrent(), 8) << "the requests of eight proposals should overlap";
  EXPECT_EQ(r.json["totals"]["proposal_states"].value("bad_reply", 0), 0) << r.out;
}

}  // namespace
}  // namespace kf
