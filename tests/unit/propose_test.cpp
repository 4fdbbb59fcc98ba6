// Proposers: the built-in one (the task's templates first, then mutations of the request's
// parent; what it has proposed follows Observe on resume) and the command proposer (a scripted
// shell command per reply: good kernels, JSON replies, and every kind of bad reply, each a
// counted outcome with its reason).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/codec.hpp"
#include "core/identity.hpp"
#include "core/task.hpp"
#include "propose/builtin/builtin_proposer.hpp"
#include "propose/builtin/mutations.hpp"
#include "propose/command/command_proposer.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

Task Rope() {
  return LoadTask(std::string(KF_TASKS) + "/rope_llama3");
}

ProposalRequest Request(const Task& task, int index) {
  ProposalRequest r;
  r.index = index;
  r.seed = 1000 + static_cast<uint64_t>(index);
  r.task_id = task.id;
  r.language = Language::kOpenCL;
  r.device.backend = "opencl";
  return r;
}

Elite BaselineElite(const Task& task) {
  Elite e;
  e.kernel = LoadKernelFile(task.PathOf("rope_vec8.cl"));
  e.kernel_id = KernelId(e.kernel);
  e.config = e.kernel.ResolveConfig({});
  e.cell = {1, 1, 0};
  e.speedup = 2;
  return e;
}

TEST(BuiltinProposer, TemplatesFirstThenNewMutationsOfTheParent) {
  Task task = Rope();
  BuiltinProposer p(task, Language::kOpenCL, nullptr);
  const size_t templates = task.templates.at(Language::kOpenCL).size();
  EXPECT_EQ(p.UnparentedLeft(), static_cast<int>(templates));
  std::set<std::string> ids;
  for (size_t i = 0; i < templates; ++i) {
    ProposalOutcome o = p.Propose(Request(task, static_cast<int>(i)));
    ASSERT_EQ(o.verdict, ProposalVerdict::kOk) << o.reason;
    EXPECT_EQ(o.proposal->origin, "template " + task.templates.at(Language::kOpenCL)[i]);
    ids.insert(KernelId(o.proposal->kernel));
  }
  EXPECT_EQ(p.UnparentedLeft(), 0);
  EXPECT_EQ(p.Propose(Request(task, 50)).verdict, ProposalVerdict::kNothingNew);

  ProposalRequest r = Request(task, 60);
  r.parent = BaselineElite(task);
  for (int i = 0; i < 6; ++i) {
    r.seed = 60 + static_cast<uint64_t>(i);
    ProposalOutcome o = p.Propose(r);
    if (o.verdict != ProposalVerdict::kOk) break;
    EXPECT_TRUE(ids.insert(KernelId(o.proposal->kernel)).second) << "proposed twice";
    EXPECT_EQ(o.proposal->parent_cell, r.parent->cell);
    EXPECT_EQ(o.proposal->mutations.size(), 1u);
  }
}

TEST(BuiltinProposer, ObservedProposalsAreNotProposedAgain) {
  Task task = Rope();
  BuiltinProposer first(task, Language::kOpenCL, nullptr);
  ProposalOutcome t0 = first.Propose(Request(task, 0));
  ProposalRequest r = Request(task, 1);
  r.parent = BaselineElite(task);
  ProposalOutcome m = first.Propose(r);
  ASSERT_EQ(m.verdict, ProposalVerdict::kOk);
  // A resumed run tells a fresh proposer what was proposed.
  BuiltinProposer resumed(task, Language::kOpenCL, nullptr);
  ProposalRecord r0, r1;
  r0.proposal = t0.proposal;
  r1.proposal = m.proposal;
  resumed.Observe(r0);
  resumed.Observe(r1);
  EXPECT_EQ(resumed.UnparentedLeft(),
            static_cast<int>(task.templates.at(Language::kOpenCL).size()) - 1);
  EXPECT_NE(resumed.Propose(Request(task, 2)).proposal->origin, t0.proposal->origin);
  ProposalOutcome again = resumed.Propose(r);  // the same seed and parent
  if (again.verdict == ProposalVerdict::kOk) {
    EXPECT_NE(KernelId(again.proposal->kernel), KernelId(m.proposal->kernel));
  }
}

class CommandProposerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kf_cmd_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  ProposalOutcome Run(const std::string& command, double timeout_s = 10,
                      size_t max_bytes = size_t{1} << 20) {
    CommandProposer p(task_, {command, timeout_s, max_bytes});
    ProposalRequest r = Request(task_, 4);
    r.parent = BaselineElite(task_);
    return p.Propose(r);
  }
  std::string Kernel(const std::string& file) { return task_.PathOf(file); }
  Task task_ = Rope();
  fs::path dir_;
};

TEST_F(CommandProposerTest, AKernelOnStdoutIsAProposalAndTheRequestArrivesOnStdin) {
  std::string request = (dir_ / "request.json").string();
  ProposalOutcome o = Run(fmt::format("cat > {}; cat {}", request, Kernel("rope_vec4.cl")));
  ASSERT_EQ(o.verdict, ProposalVerdict::kOk) << o.reason;
  EXPECT_EQ(o.proposal->kernel.EntryNames(), LoadKernelFile(Kernel("rope_vec4.cl")).EntryNames());
  EXPECT_EQ(o.proposal->kernel.language, Language::kOpenCL);
  EXPECT_EQ(o.proposal->mutations, std::vector<std::string>{"command"});
  EXPECT_EQ(o.proposal->parent_cell, (Cell{1, 1, 0}));
  std::ifstream in(request);
  nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["index"], 4);
  EXPECT_EQ(j["task"]["name"], "rope_llama3");
  EXPECT_EQ(j["parent"]["cell"], nlohmann::json::array({1, 1, 0}));
  EXPECT_FALSE(j["parent"]["kernel"]["source"].get<std::string>().empty());
}

TEST_F(CommandProposerTest, AJsonReplyGivesSourceNameAndNotes) {
  std::ifstream in(Kernel("rope_vec4.cl"));
  std::stringstream source;
  source << in.rdbuf();
  fs::path reply = dir_ / "reply.json";
  std::ofstream(reply) << nlohmann::json{
      {"source", source.str()},
      {"name", "../../escape"},
      {"notes", "four lanes"}}.dump();
  ProposalOutcome o = Run(fmt::format("cat >/dev/null; cat {}", reply.string()));
  ASSERT_EQ(o.verdict, ProposalVerdict::kOk) << o.reason;
  EXPECT_EQ(o.proposal->notes, "four lanes");
  EXPECT_EQ(fs::path(o.proposal->kernel.path).filename(), "escape.cl") << "a bare file name";
  EXPECT_EQ(o.proposal->origin, "command escape.cl");
  std::ofstream(reply) << R"({"nothing_new": true, "notes": "dry"})";
  ProposalOutcome dry = Run(fmt::format("cat {}", reply.string()));
  EXPECT_EQ(dry.verdict, ProposalVerdict::kNothingNew);
  EXPECT_EQ(dry.reason, "dry");
}

TEST_F(CommandProposerTest, EveryBadReplyIsAnOutcomeWithItsReason) {
  auto bad = [&](const std::string& command, const std::string& reason, double timeout = 10,
                 size_t max_bytes = size_t{1} << 20) {
    ProposalOutcome o = Run(command, timeout, max_bytes);
    EXPECT_EQ(o.verdict, ProposalVerdict::kBadReply) << command;
    EXPECT_NE(o.reason.find(reason), std::string::npos) << command << ": " << o.reason;
  };
  bad("true", "empty reply");
  bad("echo '__kernel void f(__global float* x) {}'", "annotations");
  bad("echo '{\"notes\": \"no source\"}'", "no \"source\"");
  bad("echo '{not json'", "not a JSON object");
  bad("cat " + Kernel("rope_vec4.cl") + "; exit 3", "exited with code 3");
  bad("kill -SEGV $$", "signal 11");
  bad("sleep 5", "no reply within", 0.3);
  bad("head -c 3000000 /dev/zero | tr '\\0' a", "over 1000000 bytes", 10, 1000000);
  // A child the command left behind is killed with it at the deadline.
  auto start = std::chrono::steady_clock::now();
  bad("sleep 30 & sleep 30", "no reply within", 0.3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ReplyText, RawSourceJsonAndNothing) {
  EXPECT_EQ(ParseReplyText("__kernel void f() {}").source, "__kernel void f() {}");
  EXPECT_EQ(ParseReplyText("  \n").error, "empty reply");
  ReplyText j = ParseReplyText(R"( {"source": "x", "name": "a.cl"})");
  EXPECT_EQ(j.source, "x");
  EXPECT_EQ(j.name, "a.cl");
  EXPECT_TRUE(ParseReplyText(R"({"nothing_new": true})").nothing_new);
}

TEST(BuiltinProposer, CreditMovesTheChoiceOfMutationTowardTheOneWhoseChildrenImprove) {
  Task task = Rope();
  ProposalRequest r = Request(task, 1);
  r.parent = BaselineElite(task);
  BuiltinProposer probe(task, Language::kOpenCL, nullptr);
  ProposalOutcome first = probe.Propose(r);
  ASSERT_EQ(first.verdict, ProposalVerdict::kOk);
  std::string good = first.proposal->mutations.back();
  // Children of `good` improve their cell, every other mutation's children do not compile.
  auto teach = [&](BuiltinProposer& p) {
    for (const Mutation& m : Mutations()) {
      ProposalRecord rec;
      rec.state = ProposalState::kDone;
      Proposal made;
      made.parent_kernel_id = "parent";
      made.mutations = {m.name};
      rec.proposal = made;
      rec.outcome["grade"] =
          static_cast<int>(m.name == good ? Grade::kImprovedCell : Grade::kCompileError);
      for (int i = 0; i < 30; ++i) p.Credit(rec);
    }
  };
  // How often `good` is chosen for the same parent over 100 seeds, by a fresh proposer each time
  // (a proposer does not propose one child twice).
  auto chosen = [&](bool taught) {
    int n = 0;
    for (uint64_t seed = 1; seed <= 100; ++seed) {
      BuiltinProposer p(task, Language::kOpenCL, nullptr);
      if (taught) teach(p);
      ProposalRequest ri = r;
      ri.seed = seed;
      ProposalOutcome o = p.Propose(ri);
      n += o.verdict == ProposalVerdict::kOk && o.proposal->mutations.back() == good;
    }
    return n;
  };
  int before = chosen(false), after = chosen(true);
  EXPECT_GE(after, 80) << "credit should favour " << good << " (untaught: " << before << ")";
  EXPECT_GT(after, before);
}

}  // namespace
}  // namespace kf
