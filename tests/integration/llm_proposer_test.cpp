// The LLM proposer against the scripted chat server on loopback: graded credit moves the choice
// of model and of prompt components toward those whose children improve, and the meta step
// rewrites the weakest component into a chain of versions, each recorded with its parent.
#include "propose/llm/llm_proposer.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "chat_server_process.hpp"
#include "core/task.hpp"
#include "kf_process.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::ScriptedChatServer;

const std::string kPrompts = std::string(KF_TEST_DATA) + "/../../prompts";

std::string Scratch(const std::string& name) {
  return testing::Scratch("llm-proposer", name);
}

nlohmann::json KernelReply() {
  return testing::Reply(
      "```c\n" + testing::ReadText(std::string(KF_TASKS) + "/rope_llama3/rope_vec4.cl") + "```\n");
}

class MemoryJournal : public PromptJournal {
 public:
  void Record(const Component& c, const nlohmann::json& meta) override {
    for (auto& [v, m] : versions)
      if (v.id == c.id && v.version == c.version) {
        v = c;
        return;
      }
    versions.emplace_back(c, meta);
  }
  std::vector<Component> Stored() override {
    std::vector<Component> out;
    for (const auto& [v, m] : versions) out.push_back(v);
    return out;
  }
  std::vector<std::pair<Component, nlohmann::json>> versions;
};

ProposalRequest Request(const Task& task, int index) {
  ProposalRequest r;
  r.index = index;
  r.seed = 1000 + static_cast<uint64_t>(index);
  r.task_id = task.id;
  r.language = Language::kOpenCL;
  r.device.name = "PoCL";
  r.device.backend = "opencl";
  Elite parent;
  parent.cell = {0, 0, 0};
  parent.kernel = LoadKernelFile(task.PathOf("baseline.cl"));
  parent.kernel_id = "kbaseline";
  parent.speedup = 1;
  r.parent = parent;
  return r;
}

ModelSettings Model(const std::string& name, const std::string& url) {
  ModelSettings m;
  m.name = name;
  m.model = name;
  m.base_url = url;
  return m;
}

// A finished proposal's record as the search would credit it.
ProposalRecord Graded(const std::string& model, const std::vector<std::string>& components,
                      Grade grade) {
  ProposalRecord r;
  r.state = ProposalState::kDone;
  r.outcome = {{"grade", static_cast<int>(grade)},
               {"proposer", {{"model", model}, {"components", components}}}};
  return r;
}

TEST(LlmProposer, CreditMovesTheChoiceTowardModelsAndComponentsWhoseChildrenImprove) {
  std::string dir = Scratch("bandit");
  ScriptedChatServer server({{"default", KernelReply()}}, dir + "/server");
  Task task = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  LlmProposerOptions o;
  o.models = {Model("good", server.base_url()), Model("poor", server.base_url())};
  o.prompts_dir = kPrompts;
  o.meta = false;
  o.limits.max_retries = 0;
  PromptLibrary library = PromptLibrary::Load(kPrompts);
  std::vector<const Component*> strategies = library.OfKind("strategy");
  ASSERT_GE(strategies.size(), 4u);
  const std::string favoured = strategies[0]->id + "@1";

  // How often, over 30 proposals, the good model writes and the favoured strategy is in the prompt.
  auto shares = [&](LlmProposer& p, int first) {
    int good = 0, with = 0;
    for (int i = 0; i < 30; ++i) {
      ProposalOutcome o = p.Propose(Request(task, first + i));
      EXPECT_EQ(o.verdict, ProposalVerdict::kOk) << o.reason;
      good += o.trail["model"] == "good";
      for (const auto& c : o.trail["components"]) with += c == favoured;
    }
    return std::make_pair(good, with);
  };
  LlmProposer fresh(task, o, nullptr);
  auto [good_before, with_before] = shares(fresh, 1);

  LlmProposer taught(task, o, nullptr);
  for (int i = 0; i < 30; ++i) {
    taught.Credit(Graded("good", {favoured}, Grade::kImprovedCell));
    std::vector<std::string> others;
    for (size_t s = 1; s < strategies.size(); ++s) others.push_back(strategies[s]->id + "@1");
    taught.Credit(Graded("poor", others, Grade::kCompileError));
  }
  auto [good_after, with_after] = shares(taught, 1);
  EXPECT_GE(good_after, 25) << "untaught: " << good_before << " of 30";
  EXPECT_GT(good_after, good_before);
  EXPECT_GE(with_after, 25) << "untaught: " << with_before << " of 30";
  EXPECT_GT(with_after, with_before);
}

TEST(LlmProposer, TheMetaStepRewritesTheWeakestComponentIntoAChainOfVersions) {
  std::string dir = Scratch("meta");
  nlohmann::json rewrite = {
      {"echo",
       {{"pattern", "```\\n([^\\n]+)"},
        {"template", "<<<<<<< SEARCH\n{1}\n=======\n{1} Guard every access.\n>>>>>>> REPLACE\n"}}}};
  ScriptedChatServer server({{"rules", {{{"when_contains", "does worst"}, {"reply", rewrite}}}},
                             {"default", KernelReply()}},
                            dir + "/server");
  Task task = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  LlmProposerOptions o;
  o.models = {Model("m", server.base_url())};
  o.prompts_dir = kPrompts;
  o.meta_every = 1;
  o.meta_min_uses = 1;
  MemoryJournal journal;
  LlmProposer p(task, o, &journal);
  const std::string id = PromptLibrary::Load(kPrompts).OfKind("pitfall")[0]->id;
  ASSERT_FALSE(journal.versions.empty()) << "the library's versions are recorded at the start";

  // The component did badly twice: each time the next proposal's meta step rewrites it.
  for (int version = 1; version <= 2; ++version) {
    p.Credit(Graded("m", {fmt::format("{}@{}", id, version)}, Grade::kNothing));
    ProposalOutcome out = p.Propose(Request(task, version));
    ASSERT_TRUE(out.trail.contains("meta")) << out.trail.dump(2);
    EXPECT_EQ(out.trail["meta"].value("made", ""), fmt::format("{}@{}", id, version + 1))
        << out.trail["meta"].dump(2);
  }
  std::vector<std::pair<Component, nlohmann::json>> chain;
  for (const auto& v : journal.versions)
    if (v.first.id == id) chain.push_back(v);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0].first.made_by, "library");
  for (int i = 1; i <= 2; ++i) {
    EXPECT_EQ(chain[i].first.version, i + 1);
    EXPECT_EQ(chain[i].first.parent_version, i);
    EXPECT_EQ(chain[i].first.made_by, "meta");
    EXPECT_NE(chain[i].first.text, chain[i - 1].first.text);
    EXPECT_NE(chain[i].second.value("reply", "").find("Guard every access."), std::string::npos);
  }

  // A proposer made again from the journal (a resumed run) goes on from the last version.
  LlmProposer resumed(task, o, &journal);
  resumed.Credit(Graded("m", {id + "@3"}, Grade::kNothing));
  ProposalOutcome out = resumed.Propose(Request(task, 3));
  EXPECT_EQ(out.trail["meta"].value("made", ""), id + "@4") << out.trail["meta"].dump(2);
}

}  // namespace
}  // namespace kf
