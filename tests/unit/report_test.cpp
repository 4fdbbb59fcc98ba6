// The report's parts that need no browser: the run view read from a store, kernel details, the
// run list, the page's data embedding and the terminal heat map.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/codec.hpp"
#include "core/identity.hpp"
#include "report/page.hpp"
#include "report/run_view.hpp"
#include "report/text_heatmap.hpp"
#include "search/classifier.hpp"
#include "store/store.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Kernel KernelWith(const std::string& name, const std::string& body) {
  return ParseKernel(name,
                     "// @kernel k\n// @grid 1\n// @block 1\n// @param B in [1, 2]\n"
                     "__kernel void k(__global float* x) { " +
                         body + " }\n");
}

Evaluation Ok(double ms, double baseline_ms, std::vector<int> cell) {
  Evaluation ev;
  ev.status = Status::kOk;
  ev.time = TimingStats{ms, ms * 0.9, ms * 1.1, 20};
  ev.baseline_time = TimingStats{baseline_ms, baseline_ms, baseline_ms, 20};
  ev.speedup = baseline_ms / ms;
  ev.bandwidth_gbs = 1000.0 / ms;  // a task moving 1 MB
  ev.roofline_fraction = *ev.bandwidth_gbs / 2000.0;
  ev.gflops = 500.0 / ms;  // and doing 0.5 GFLOP
  ev.compute_fraction = *ev.gflops / 8000.0;
  ev.compared = true;
  ev.bench_sizes = "bench";
  ev.descriptor = std::move(cell);
  ev.device = "opencl:0 (test)";
  ev.compile_log = std::string(10000, 'w');
  return ev;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ =
        (fs::temp_directory_path() / ("kf_report_" + std::to_string(getpid()) + ".db")).string();
    Clean();
    store_ = OpenStore("sqlite:" + path_);
    store_->OpenRun({"r1", "rope_llama3", "opencl:0 (test)", {{"budget", 9}}, ""});
    baseline_ = KernelWith("baseline.cl", "x[0] = 1;");
    child_ = KernelWith("vec.cl", "x[0] = 2;");
    // The baseline, then a proposal (a child of the baseline) with two configurations, one of
    // them wrong.
    store_->PutEvaluation("r1", baseline_, {}, "kb", Ok(2.0, 2.0, {0, 0, 0}), {-1, "search"});
    ProposalRecord p;
    p.index = 0;
    p.state = ProposalState::kDone;
    p.request = {{"by", "builtin"}, {"parent", {{"kernel_id", KernelId(baseline_)}}}};
    p.proposal = Proposal{
        child_,       "vectorise of baseline.cl", KernelId(baseline_), Cell{0, 0, 0}, {"vectorise"},
        "wider loads"};
    p.outcome = {{"grade", 5}, {"proposer", {{"model", "m1"}, {"cost", 0.25}}}};
    store_->PutProposal("r1", p);
    Evaluation wrong = Ok(0.5, 2.0, {1, 0, 0});
    wrong.status = Status::kIncorrect;
    wrong.reason = "max_rel_err 0.5";
    store_->PutEvaluation("r1", child_, {{"B", "1"}}, "kc1", wrong, {0, "search"});
    store_->PutEvaluation("r1", child_, {{"B", "2"}}, "kc2", Ok(0.5, 2.0, {1, 0, 0}),
                          {0, "search"});
  }
  void TearDown() override {
    store_.reset();
    Clean();
  }
  void Clean() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_ + suffix);
  }
  std::string path_;
  std::unique_ptr<Store> store_;
  Kernel baseline_, child_;
};

TEST_F(ReportTest, TheRunViewHoldsEveryEvaluationKernelAndFigure) {
  DescriptorSpace space = DescriptorSpace::Load(KF_DESCRIPTORS);
  json v = RunView(*store_, *store_->FindRun("r1"), space, nullptr);
  ASSERT_EQ(v["evaluations"].size(), 3u);
  const json& columns = v["columns"];
  for (const json& row : v["evaluations"]) EXPECT_EQ(row.size(), columns.size());
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  const json& rows = v["evaluations"];
  EXPECT_EQ(rows[0][column("kernel")], KernelId(baseline_));
  EXPECT_EQ(rows[1][column("status")], "incorrect");
  EXPECT_DOUBLE_EQ(rows[2][column("speedup")].get<double>(), 4.0);
  EXPECT_EQ(rows[2][column("config")], ConfigToJson(Config{{"B", "2"}}));
  EXPECT_EQ(rows[2][column("cell")], json({1, 0, 0}));
  EXPECT_DOUBLE_EQ(rows[0][column("t")].get<double>(), 0.0);
  EXPECT_GE(rows[2][column("t")].get<double>(), rows[1][column("t")].get<double>());

  const json& kernels = v["kernels"];
  ASSERT_TRUE(kernels.contains(KernelId(child_)));
  const json& child = kernels[KernelId(child_)];
  EXPECT_EQ(child["parent"], KernelId(baseline_));
  EXPECT_EQ(child["name"], "vec.cl");
  EXPECT_EQ(child["model"], "m1");
  EXPECT_EQ(child["proposer"], "builtin");
  EXPECT_EQ(child["evaluations"], 2);
  EXPECT_DOUBLE_EQ(child["best_speedup"].get<double>(), 4.0);
  EXPECT_EQ(kernels[KernelId(baseline_)]["origin"], "baseline");

  EXPECT_EQ(v["verdicts"]["ok"], 2);
  EXPECT_EQ(v["verdicts"]["incorrect"], 1);
  // The peak the fractions were taken against: bandwidth / fraction.
  EXPECT_NEAR(v["roofline"]["peak_gbs"].get<double>(), 2000.0, 1e-9);
  EXPECT_NEAR(v["roofline"]["peak_gflops"].get<double>(), 8000.0, 1e-9);  // the compute ceiling
  EXPECT_TRUE(v["roofline"]["flops_per_byte"].is_null());                 // no task given
  EXPECT_DOUBLE_EQ(v["baseline_ms"].get<double>(), 2.0);
  ASSERT_EQ(v["behaviour"].size(), space.dimensions().size());
  EXPECT_EQ(v["behaviour"][0]["name"], space.dimensions()[0].name);
  EXPECT_FALSE(v["run"]["finished"].get<bool>());
  EXPECT_EQ(v["proposals"][0]["mutations"], json({"vectorise"}));
}

TEST_F(ReportTest, TheVersionChangesWhenAnythingLandsAndFinishingIsSeen) {
  std::string before = store_->RunVersion("r1");
  store_->PutEvaluation("r1", child_, {{"B", "3"}}, "kc3", Ok(0.6, 2.0, {1, 0, 0}), {0, "search"});
  std::string after = store_->RunVersion("r1");
  EXPECT_NE(before, after);
  store_->AddEvent("r1", "finish", {{"stop_reason", "budget"}});
  EXPECT_NE(store_->RunVersion("r1"), after);
  EXPECT_TRUE(store_->Stats("r1").Finished());
  json runs = RunList(*store_);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["name"], "r1");
  EXPECT_EQ(runs[0]["evaluations"], 4);
  EXPECT_EQ(runs[0]["proposals"], 1);
  EXPECT_TRUE(runs[0]["finished"].get<bool>());
}

TEST_F(ReportTest, AKernelsDetailHasItsSourceParentAndEveryEvaluation) {
  json d = KernelDetail(*store_, "r1", KernelId(child_), 100);
  EXPECT_EQ(d["source"], child_.source);
  EXPECT_EQ(d["parent_source"], baseline_.source);
  ASSERT_EQ(d["evaluations"].size(), 2u);
  EXPECT_EQ(d["evaluations"][0]["status"], "incorrect");
  EXPECT_EQ(d["evaluations"][0]["reason"], "max_rel_err 0.5");
  EXPECT_LT(d["evaluations"][1]["compile_log"].get<std::string>().size(), 200u);  // cut
  EXPECT_EQ(d["proposal"]["trail"]["model"], "m1");
  EXPECT_FALSE(d["proposal"]["outcome"].contains("proposer"));  // once, as the trail

  json all = KernelDetails(*store_, "r1", 0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[KernelId(baseline_)]["source"], baseline_.source);
  EXPECT_EQ(all[KernelId(child_)]["evaluations"][1]["compile_log"].get<std::string>().size(),
            10000u);  // whole
}

TEST_F(ReportTest, AnUnknownRunOrKernelIsNotFound) {
  EXPECT_THROW(KernelDetail(*store_, "nope", KernelId(child_)), NotFound);
  EXPECT_THROW(KernelDetail(*store_, "r1", "k0000"), NotFound);
  // A kernel of the store that this run never touched is not the run's.
  store_->OpenRun({"r2", "rope_llama3", "opencl:0 (test)", {}, ""});
  EXPECT_THROW(KernelDetail(*store_, "r2", KernelId(child_)), NotFound);
}

TEST(ReportPage, TheDataCannotCloseItsScriptAndReadsBackWhole) {
  json data = {
      {"mode", "report"}, {"source", "</script><script>alert(1)</script><!-- & \"q\""}, {"n", 3}};
  std::string html = PageHtml(data);
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(html.find("/*KF_DATA*/"), std::string::npos);
  EXPECT_EQ(html.find("/*KF_SCRIPT*/"), std::string::npos);
  EXPECT_EQ(html.find("/*KF_STYLE*/"), std::string::npos);
  const std::string open = "<script id=\"kf-data\" type=\"application/json\">";
  size_t start = html.find(open);
  ASSERT_NE(start, std::string::npos);
  start += open.size();
  size_t end = html.find("</script>", start);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(json::parse(html.substr(start, end - start)), data);
}

TEST(ReportPage, TheBuiltInScriptAndStylesCloseNothingEarly) {
  // The page has two script elements and one style element; the script and styles put into
  // them must not end them early.
  std::string html = PageHtml(json::object());
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("</script"), 2u);
  EXPECT_EQ(count("</style"), 1u);
  EXPECT_EQ(count("<!--"), 0u);
}

TEST(ReportTime, StoreTimesParseWithAndWithoutMilliseconds) {
  std::optional<double> a = StoreTimeSeconds("2026-12-04T10:15:00Z");
  std::optional<double> b = StoreTimeSeconds("2026-12-04T10:15:01.250Z");
  ASSERT_TRUE(a && b);
  EXPECT_NEAR(*b - *a, 1.25, 1e-9);
  EXPECT_NEAR(*a, 1796379300.0, 0.5);  // date -u -d 2026-12-04T10:15:00Z +%s
  EXPECT_FALSE(StoreTimeSeconds("yesterday"));
}

TEST(TextHeatMap, EachFilledCellShowsItsSpeedupWhereItsLevelsMeet) {
  DescriptorSpace space = DescriptorSpace::Load(KF_DESCRIPTORS);
  const auto& dims = space.dimensions();
  ASSERT_EQ(dims.size(), 3u);
  std::map<std::vector<int>, double> speedups = {{{1, 2, 0}, 3.5}, {{3, 0, 3}, 12.25}};
  std::string map = TextHeatMap(dims, speedups, false);
  EXPECT_EQ(map.find('\x1b'), std::string::npos);
  // The row of memory level 1 holds 3.50x in the third column of the first panel.
  std::istringstream lines(map);
  std::string line, row1, row3;
  while (std::getline(lines, line)) {
    if (line.rfind(dims[0].levels[1], 0) == 0 && row1.empty()) row1 = line;
    if (line.rfind(dims[0].levels[3], 0) == 0) row3 = line;  // the last panel row's
  }
  ASSERT_FALSE(row1.empty()) << map;
  size_t cell = row1.find("3.50x");
  ASSERT_NE(cell, std::string::npos) << map;
  EXPECT_EQ(row1.substr(0, cell).find("x"), std::string::npos);  // nothing filled before it
  EXPECT_NE(row3.find("12.2x"), std::string::npos) << map;
  size_t dots = 0;
  for (size_t at = map.find("·"); at != std::string::npos; at = map.find("·", at + 1)) ++dots;
  EXPECT_EQ(dots, 64u - 2u + 1u);  // the empty cells, and the legend's one
  for (const auto& d : dims)
    for (size_t l = 0; l < d.levels.size() && &d == &dims[2]; ++l)
      EXPECT_NE(map.find(d.name + " = " + d.levels[l]), std::string::npos);
  EXPECT_NE(TextHeatMap(dims, speedups, true).find("\x1b[48;5;"), std::string::npos);
}

}  // namespace
}  // namespace kf
