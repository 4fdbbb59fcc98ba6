// The prompt library (the shipped prompts/ load and aim at real cells; bad files name file, line
// and field; versions chain; credit statistics), the Thompson-sampling bandit (it learns, it is
// deterministic per seed, weights and penalties), and SEARCH/REPLACE edits (exact,
// whitespace-tolerant, ambiguous, no match, several blocks, unclosed).
#include <gtest/gtest.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/input_error.hpp"
#include "core/task.hpp"
#include "prompt/assemble.hpp"
#include "prompt/bandit.hpp"
#include "prompt/library.hpp"
#include "prompt/search_replace.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

const std::string kShippedPrompts = std::string(KF_TEST_DATA) + "/../../prompts";

// A fresh folder under the temporary directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("kf_prompt_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return (path_ / name).string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// "dimension=level" for every level of the default descriptor space.
std::set<std::string> DescriptorCells() {
  toml::table root = toml::parse_file(KF_DESCRIPTORS);
  std::set<std::string> cells;
  for (const toml::node& n : *root["dimension"].as_array()) {
    const toml::table& dim = *n.as_table();
    std::string name = dim["name"].value_or(std::string());
    for (const toml::node& level : *dim["levels"].as_array())
      cells.insert(name + "=" + level.value_or(std::string()));
  }
  return cells;
}

const char* kGoodComponent = R"(
[[component]]
id = "memory.a"
kind = "strategy"
category = "memory"
aims = ["memory=vectorised"]
text = "Load wide."
)";

// The message of the InputError that loading `text` as a one-file library throws.
std::string LoadError(const std::string& text, std::string* file = nullptr) {
  TempDir dir;
  std::string path = dir.Write("bad.toml", text);
  if (file) *file = path;
  try {
    PromptLibrary::Load(dir.path());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(PromptLibrary, ShippedLibraryLoadsAndAimsAtRealCells) {
  PromptLibrary lib = PromptLibrary::Load(kShippedPrompts);
  std::vector<const Component*> strategies = lib.OfKind("strategy");
  EXPECT_GE(strategies.size(), 12u);
  std::size_t philosophy = lib.OfKind("philosophy").size();
  EXPECT_GE(philosophy, 2u);
  EXPECT_LE(philosophy, 3u);
  EXPECT_GE(lib.OfKind("pitfall").size(), 7u);
  EXPECT_GE(lib.OfKind("analysis").size(), 3u);
  std::map<std::string, int> per_category;
  for (const Component* s : strategies) per_category[s->category]++;
  for (const char* category : {"memory", "compute", "parallelism"})
    EXPECT_GE(per_category[category], 3) << category;

  const std::set<std::string> cells = DescriptorCells();
  ASSERT_EQ(cells.size(), 12u);
  std::set<std::string> aimed;
  for (const Component& c : lib.components()) {
    EXPECT_FALSE(c.text.empty()) << c.id;
    EXPECT_LE(c.text.size(), 1200u) << c.id << " is longer than a short paragraph";
    EXPECT_EQ(c.version, 1);
    EXPECT_EQ(c.made_by, "library");
    for (const std::string& aim : c.aims) {
      EXPECT_TRUE(cells.count(aim)) << c.id << " aims at " << aim << ", not a descriptor level";
      aimed.insert(aim);
    }
  }
  // Every level above the first of each dimension has a strategy aimed at it.
  for (const char* cell :
       {"memory=vectorised", "memory=local_tiling", "memory=hierarchical", "algorithm=looped",
        "algorithm=unrolled", "algorithm=matrix_units", "coordination=group_barriers",
        "coordination=sub_group_collectives", "coordination=atomics"})
    EXPECT_TRUE(aimed.count(cell)) << cell;
  ASSERT_NE(lib.Find("memory.vectorise_loads"), nullptr);
  EXPECT_EQ(lib.Find("memory.vectorise_loads")->category, "memory");
  EXPECT_EQ(lib.Find("no.such"), nullptr);
}

TEST(PromptLibrary, FilesLoadInNameOrder) {
  TempDir dir;
  dir.Write("b.toml", "[[component]]\nid = \"b\"\nkind = \"pitfall\"\ntext = \"B\"\n");
  dir.Write("a.toml",
            "[[component]]\nid = \"a2\"\nkind = \"analysis\"\ntext = \"A2\"\n"
            "[[component]]\nid = \"a1\"\nkind = \"philosophy\"\ntext = \"A1\"\n");
  dir.Write("notes.txt", "not a prompt file");
  PromptLibrary lib = PromptLibrary::Load(dir.path());
  ASSERT_EQ(lib.components().size(), 3u);
  EXPECT_EQ(lib.components()[0].id, "a2");
  EXPECT_EQ(lib.components()[1].id, "a1");
  EXPECT_EQ(lib.components()[2].id, "b");
  EXPECT_TRUE(lib.components()[0].aims.empty());
  EXPECT_EQ(lib.components()[0].category, "");
}

TEST(PromptLibrary, BadFilesNameFileLineAndField) {
  std::string file;
  std::string e = LoadError(std::string(kGoodComponent) + "colour = \"red\"\n", &file);
  EXPECT_NE(e.find(file + ":8: component.colour: unknown field"), std::string::npos) << e;

  e = LoadError("[[component]]\nid = \"x\"\nkind = \"recipe\"\ntext = \"t\"\n", &file);
  EXPECT_NE(e.find(file + ":3: component.kind:"), std::string::npos) << e;
  EXPECT_NE(e.find("recipe"), std::string::npos) << e;

  e = LoadError("[[component]]\nid = \"x\"\nkind = \"strategy\"\ntext = \"t\"\n", &file);
  EXPECT_NE(e.find(file + ":1: component.category: missing"), std::string::npos) << e;

  e = LoadError(
      "[[component]]\nid = \"x\"\nkind = \"strategy\"\ncategory = \"speed\"\ntext = \"t\"\n",
      &file);
  EXPECT_NE(e.find(file + ":4: component.category:"), std::string::npos) << e;

  e = LoadError(
      "[[component]]\nid = \"x\"\nkind = \"pitfall\"\ncategory = \"memory\"\ntext = \"t\"\n");
  EXPECT_NE(e.find(":4: component.category: only strategies"), std::string::npos) << e;

  e = LoadError(
      "[[component]]\nid = \"x\"\nkind = \"pitfall\"\naims = [\"vectorised\"]\n"
      "text = \"t\"\n",
      &file);
  EXPECT_NE(e.find(file + ":4: component.aims:"), std::string::npos) << e;

  e = LoadError("[[component]]\nid = \"x\"\nkind = \"pitfall\"\ntext = 3\n");
  EXPECT_NE(e.find(":4: component.text: must be a string"), std::string::npos) << e;

  e = LoadError("[[component]]\nid = \"x\"\nkind = \"pitfall\"\n");
  EXPECT_NE(e.find(":1: component.text: missing"), std::string::npos) << e;

  e = LoadError("title = \"prompts\"\n" + std::string(kGoodComponent), &file);
  EXPECT_NE(e.find(file + ":1: title: unknown field"), std::string::npos) << e;

  e = LoadError("[[component]\nid = \"x\"\n", &file);
  EXPECT_NE(e.find(file + ":1: syntax:"), std::string::npos) << e;
}

TEST(PromptLibrary, DuplicateIdsAcrossFilesAreRefused) {
  TempDir dir;
  std::string first = dir.Write("a.toml", kGoodComponent);
  std::string second = dir.Write("b.toml", std::string("\n") + kGoodComponent);
  try {
    PromptLibrary::Load(dir.path());
    FAIL() << "a duplicate id loaded";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(second + ":4: component.id: duplicate id \"memory.a\""), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(first + ":2"), std::string::npos) << msg;
  }
  EXPECT_THROW(PromptLibrary::Load(dir.path() + "/missing"), InputError);
}

TEST(PromptLibrary, AddVersionChainsVersionsAndResetsStatistics) {
  TempDir dir;
  dir.Write("a.toml", kGoodComponent);
  PromptLibrary lib = PromptLibrary::Load(dir.path());
  const Component* c = lib.Find("memory.a");
  lib.Credit("memory.a", 5, 0.5);
  const Component& v2 = lib.AddVersion("memory.a", "Load wider.");
  EXPECT_EQ(&v2, c);  // replaced in place: earlier pointers see the current version
  EXPECT_EQ(v2.version, 2);
  EXPECT_EQ(v2.parent_version, 1);
  EXPECT_EQ(v2.made_by, "meta");
  EXPECT_EQ(v2.text, "Load wider.");
  EXPECT_EQ(v2.stats.uses, 0);
  EXPECT_EQ(v2.aims, std::vector<std::string>{"memory=vectorised"});
  const Component& v3 = lib.AddVersion("memory.a", "Load widest.");
  EXPECT_EQ(v3.version, 3);
  EXPECT_EQ(v3.parent_version, 2);
  EXPECT_EQ(lib.components().size(), 1u);
  EXPECT_THROW(lib.AddVersion("no.such", "x"), std::out_of_range);
}

TEST(PromptLibrary, ReplacePutsStoredVersionsBack) {
  TempDir dir;
  dir.Write("a.toml", kGoodComponent);
  PromptLibrary lib = PromptLibrary::Load(dir.path());
  Component stored = *lib.Find("memory.a");
  stored.version = 4;
  stored.parent_version = 3;
  stored.made_by = "meta";
  stored.text = "Evolved.";
  stored.stats.uses = 7;
  EXPECT_TRUE(lib.Replace(stored));
  EXPECT_EQ(lib.Find("memory.a")->text, "Evolved.");
  EXPECT_EQ(lib.Find("memory.a")->stats.uses, 7);
  stored.version = 2;
  stored.text = "Older.";
  EXPECT_FALSE(lib.Replace(stored));
  EXPECT_EQ(lib.Find("memory.a")->text, "Evolved.");
  stored.version = 4;
  stored.stats.uses = 9;  // the same version with later statistics
  EXPECT_TRUE(lib.Replace(stored));
  EXPECT_EQ(lib.Find("memory.a")->stats.uses, 9);
  stored.id = "gone";
  EXPECT_FALSE(lib.Replace(stored));
  EXPECT_EQ(lib.components().size(), 1u);
}

TEST(PromptLibrary, CreditKeepsStatistics) {
  TempDir dir;
  dir.Write("a.toml", kGoodComponent);
  PromptLibrary lib = PromptLibrary::Load(dir.path());
  EXPECT_EQ(lib.Find("memory.a")->stats.MeanCredit(), 0);
  EXPECT_EQ(lib.Find("memory.a")->stats.ImprovementRate(), 0);
  lib.Credit("memory.a", 5, 0.5);
  lib.Credit("memory.a", 3, 0);
  lib.Credit("memory.a", 0, 0);
  lib.Credit("memory.a", 4, 0.25);
  lib.Credit("no.such", 5, 1);  // ignored
  const ComponentStats& s = lib.Find("memory.a")->stats;
  EXPECT_EQ(s.uses, 4);
  EXPECT_EQ(s.improvements, 2);
  EXPECT_NEAR(s.credit, 2.4, 1e-12);
  EXPECT_NEAR(s.gain, 0.75, 1e-12);
  EXPECT_NEAR(s.MeanCredit(), 0.6, 1e-12);
  EXPECT_NEAR(s.ImprovementRate(), 0.5, 1e-12);
}

TEST(PromptLibrary, DefaultPromptsDirHonoursTheEnvironment) {
  const char* before = std::getenv("KF_PROMPTS_DIR");
  std::string saved = before ? before : "";
  setenv("KF_PROMPTS_DIR", "/some/prompts", 1);
  EXPECT_EQ(DefaultPromptsDir(), "/some/prompts");
  unsetenv("KF_PROMPTS_DIR");
  EXPECT_FALSE(DefaultPromptsDir().empty());
  if (before) setenv("KF_PROMPTS_DIR", saved.c_str(), 1);
}

TEST(Bandit, MovesTowardTheBetterArm) {
  Bandit bandit;
  for (int i = 0; i < 50; ++i) {
    bandit.Reward("good", 0.9);
    bandit.Reward("bad", 0.1);
  }
  EXPECT_EQ(bandit.Pulls("good"), 50);
  EXPECT_EQ(bandit.Pulls("unseen"), 0);
  EXPECT_NEAR(bandit.Mean("good"), (1 + 45.0) / 52, 1e-12);
  EXPECT_NEAR(bandit.Mean("bad"), (1 + 5.0) / 52, 1e-12);
  EXPECT_DOUBLE_EQ(bandit.Mean("unseen"), 0.5);
  std::mt19937_64 rng(7);
  int good = 0;
  for (int i = 0; i < 200; ++i) good += bandit.Choose({"bad", "good"}, 1, rng)[0] == "good";
  EXPECT_GE(good, 180);
}

TEST(Bandit, UnseenArmsAreExplored) {
  Bandit bandit;
  for (int i = 0; i < 5; ++i) bandit.Reward("known", 0.5);
  std::mt19937_64 rng(3);
  std::map<std::string, int> firsts;
  for (int i = 0; i < 200; ++i) firsts[bandit.Choose({"known", "new"}, 1, rng)[0]]++;
  EXPECT_GT(firsts["new"], 40);
  EXPECT_GT(firsts["known"], 40);
}

TEST(Bandit, DeterministicPerSeed) {
  Bandit bandit(2, 2);
  bandit.Reward("a", 0.3);
  bandit.Reward("b", 0.6);
  const std::vector<std::string> arms = {"a", "b", "c", "d"};
  auto draws = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::vector<std::string>> out;
    for (int i = 0; i < 50; ++i) out.push_back(bandit.Choose(arms, 2, rng));
    return out;
  };
  EXPECT_EQ(draws(11), draws(11));
  EXPECT_NE(draws(11), draws(12));
}

TEST(Bandit, ReturnsDistinctArmsBestFirst) {
  Bandit bandit;
  std::mt19937_64 rng(1);
  std::vector<std::string> all = bandit.Choose({"a", "b", "a", "c"}, 10, rng);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()), (std::set<std::string>{"a", "b", "c"}));
  EXPECT_EQ(bandit.Choose({"a", "b"}, 0, rng).size(), 0u);
  EXPECT_EQ(bandit.Choose({}, 3, rng).size(), 0u);
  EXPECT_EQ(bandit.Choose({"a", "b", "c"}, 2, rng).size(), 2u);
}

TEST(Bandit, WeightsAndPenaltiesShiftTheChoice) {
  Bandit bandit;
  for (int i = 0; i < 50; ++i) {
    bandit.Reward("good", 0.9);
    bandit.Reward("bad", 0.1);
  }
  std::mt19937_64 rng(5);
  auto weight = [](const std::string& arm) { return arm == "bad" ? 100.0 : 1.0; };
  auto penalty = [](const std::string& arm) { return arm == "good" ? 2.0 : 0.0; };
  int bad_weighted = 0, bad_penalised = 0;
  for (int i = 0; i < 100; ++i) {
    bad_weighted += bandit.Choose({"good", "bad"}, 1, rng, weight)[0] == "bad";
    bad_penalised += bandit.Choose({"good", "bad"}, 1, rng, {}, penalty)[0] == "bad";
  }
  EXPECT_GE(bad_weighted, 95);
  EXPECT_EQ(bad_penalised, 100);  // θ ≤ 1 can never make up a penalty of 2
  // A ranking of everything puts the penalised arm last.
  std::vector<std::string> ranked = bandit.Choose({"good", "bad", "x"}, 3, rng, {}, penalty);
  EXPECT_EQ(ranked.back(), "good");
}

TEST(Bandit, RewardsAreClampedAndGradesScaled) {
  Bandit bandit;
  bandit.Reward("a", 7);
  EXPECT_NEAR(bandit.Mean("a"), 2.0 / 3, 1e-12);
  bandit.Reward("b", -1);
  bandit.Reward("b", std::nan(""));
  EXPECT_NEAR(bandit.Mean("b"), 1.0 / 4, 1e-12);
  EXPECT_EQ(bandit.Pulls("b"), 2);
  EXPECT_EQ(GradeCredit(0), 0);
  EXPECT_DOUBLE_EQ(GradeCredit(3), 0.6);
  EXPECT_EQ(GradeCredit(5), 1);
  EXPECT_EQ(GradeCredit(9), 1);
  EXPECT_EQ(GradeCredit(-2), 0);
  std::mt19937_64 rng(9);
  double sum = 0;
  for (int i = 0; i < 4000; ++i) {
    double x = SampleBeta(2, 6, rng);
    ASSERT_GE(x, 0);
    ASSERT_LE(x, 1);
    sum += x;
  }
  EXPECT_NEAR(sum / 4000, 0.25, 0.02);
}

const std::string kKernel =
    "__kernel void k(__global float* x, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  x[i] = x[i] * 2.0f;\n"
    "}\n";

std::string Block(const std::string& search, const std::string& replace) {
  return "<<<<<<< SEARCH\n" + search + "=======\n" + replace + ">>>>>>> REPLACE\n";
}

TEST(SearchReplace, ParsesBlocksAnywhereInTheText) {
  std::string text =
      "I will double less.\n```cuda\n<<<<<<< SEARCH  \n  x[i] = x[i] * 2.0f;\n=======\n"
      "  x[i] = x[i] * 1.5f;\n>>>>>>> REPLACE\n```\nAnd also:\n<<<<< SEARCH\r\nint i;\r\n"
      "=========\r\n>>>>>>>>> REPLACE\r\nDone.\n";
  ParsedEdits p = ParseEditBlocks(text);
  EXPECT_EQ(p.error, "");
  ASSERT_EQ(p.blocks.size(), 2u);
  EXPECT_EQ(p.blocks[0].search, "  x[i] = x[i] * 2.0f;\n");
  EXPECT_EQ(p.blocks[0].replace, "  x[i] = x[i] * 1.5f;\n");
  EXPECT_EQ(p.blocks[1].search, "int i;\n");
  EXPECT_EQ(p.blocks[1].replace, "");
  EXPECT_TRUE(ParseEditBlocks("no edits here\n<<<< SEARCH\n").blocks.empty());
  EXPECT_EQ(ParseEditBlocks("no edits here\n<<<< SEARCH\n").error, "");
}

TEST(SearchReplace, ParseErrorsNameTheBlock) {
  ParsedEdits p = ParseEditBlocks(Block("a\n", "b\n") + "<<<<<<< SEARCH\nc\n>>>>>>> REPLACE\n");
  EXPECT_EQ(p.error, "block 2 has no ======= line");
  EXPECT_EQ(p.blocks.size(), 1u);
  p = ParseEditBlocks("<<<<<<< SEARCH\na\n=======\nb\n");
  EXPECT_EQ(p.error, "block 1 is not closed (the reply was cut off?)");
  p = ParseEditBlocks("<<<<<<< SEARCH\na\n");
  EXPECT_EQ(p.error, "block 1 is not closed (the reply was cut off?)");
  p = ParseEditBlocks("<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\n");
  EXPECT_EQ(p.error, "block 1 has no >>>>>>> REPLACE line");
}

TEST(SearchReplace, ExactMatch) {
  EditResult r = ApplyEdits(kKernel, {{"  x[i] = x[i] * 2.0f;\n", "  x[i] = x[i] + x[i];\n"}});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.applied, 1);
  EXPECT_EQ(r.text,
            "__kernel void k(__global float* x, int n) {\n"
            "  int i = get_global_id(0);\n"
            "  if (i >= n) return;\n"
            "  x[i] = x[i] + x[i];\n"
            "}\n");
}

TEST(SearchReplace, ExactMatchesWholeLinesOnly) {
  // "x = 1;" also occurs inside "max = 1;": only the whole line counts.
  std::string text = "int max = 1;\nx = 1;\n";
  EditResult r = ApplyEdits(text, {{"x = 1;\n", "x = 2;\n"}});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.text, "int max = 1;\nx = 2;\n");
}

TEST(SearchReplace, ToleratesDifferentIndentationAndReindents) {
  std::string original =
      "void f() {\n"
      "    if (a) {\n"
      "        b();\n"
      "    }\n"
      "}\n";
  EditResult r = ApplyEdits(
      original, {{"if (a) {\n    b();\n}\n", "if (a) {\n    b();\n    c();\n}\nd();\n"}});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.text,
            "void f() {\n"
            "    if (a) {\n"
            "        b();\n"
            "        c();\n"
            "    }\n"
            "    d();\n"
            "}\n");
}

TEST(SearchReplace, ToleratesTrailingSpacesAndBlankLines) {
  std::string original = "a();   \n\n  b();\nc();\n";
  EditResult r = ApplyEdits(original, {{"a();\nb();  \n", "ab();\n"}});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.text, "ab();\nc();\n");
}

TEST(SearchReplace, KeepsCrlfLineEndings) {
  std::string original = "int a;\r\nint b;\r\nint c;\r\n";
  EditResult r = ApplyEdits(original, {{"int b;\n", "int b2;\nint b3;\n"}});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.text, "int a;\r\nint b2;\r\nint b3;\r\nint c;\r\n");
}

TEST(SearchReplace, MatchesTheLastLineWithoutANewline) {
  EditResult r = ApplyEdits("a\nb", {{"b\n", "c\n"}});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.text, "a\nc");
}

TEST(SearchReplace, AmbiguousMatchIsAnError) {
  std::string original = "x = 1;\ny = 2;\n  x = 1;\n";
  // One exact match wins over further whitespace-tolerant ones.
  EditResult r = ApplyEdits(original, {{"x = 1;\n", "x = 3;\n"}});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.text, "x = 3;\ny = 2;\n  x = 1;\n");
  r = ApplyEdits(original, {{" x = 1;\n", "x = 3;\n"}}, "the parent");
  EXPECT_EQ(r.applied, 0);
  EXPECT_EQ(r.text, original);
  EXPECT_NE(r.error.find("SEARCH block 1 matches 2 places in the parent"), std::string::npos)
      << r.error;
  r = ApplyEdits("x = 1;\nx = 1;\n", {{"x = 1;\n", "x = 3;\n"}});
  EXPECT_NE(r.error.find("matches 2 places"), std::string::npos) << r.error;
}

TEST(SearchReplace, NoMatchQuotesTheFirstLine) {
  EditResult r = ApplyEdits(kKernel, {{"\n  float y = 0;\n  y += 1;\n", "\n"}}, "the parent");
  EXPECT_EQ(r.error, "SEARCH block 1 matches nothing in the parent: \"float y = 0;\"");
  std::string long_line = "float " + std::string(100, 'z') + " = 0;\n";
  r = ApplyEdits(kKernel, {{long_line, ""}});
  size_t quote = r.error.find('"');
  ASSERT_NE(quote, std::string::npos);
  std::string quoted = r.error.substr(quote + 1, r.error.size() - quote - 2);
  EXPECT_LE(quoted.size(), 80u);
  EXPECT_TRUE(quoted.ends_with("...")) << quoted;
  r = ApplyEdits(kKernel, {{"\n  \n", "x\n"}});
  EXPECT_EQ(r.error, "SEARCH block 1 has no lines to look for");
}

TEST(SearchReplace, AppliesBlocksInOrderEachToThePreviousResult) {
  std::vector<EditBlock> blocks = {
      {"  x[i] = x[i] * 2.0f;\n", "  x[i] = x[i] * SCALE;\n"},
      {"x[i] = x[i] * SCALE;\n", "x[i] = fma(x[i], SCALE, 1.0f);\n"},
      {"__kernel void k(__global float* x, int n) {\n",
       "#define SCALE 2.0f\n__kernel void k(__global float* x, int n) {\n"},
  };
  EditResult r = ApplyEdits(kKernel, blocks);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.applied, 3);
  EXPECT_EQ(r.text,
            "#define SCALE 2.0f\n"
            "__kernel void k(__global float* x, int n) {\n"
            "  int i = get_global_id(0);\n"
            "  if (i >= n) return;\n"
            "  x[i] = fma(x[i], SCALE, 1.0f);\n"
            "}\n");
  // A failing second block keeps the first applied and says which one failed.
  blocks[1].search = "nothing like this\n";
  r = ApplyEdits(kKernel, blocks);
  EXPECT_EQ(r.applied, 1);
  EXPECT_NE(r.error.find("SEARCH block 2 matches nothing"), std::string::npos) << r.error;
  EXPECT_NE(r.text.find("SCALE"), std::string::npos);
}

TEST(SearchReplace, ParsedBlocksApplyToTheirText) {
  std::string reply =
      "```\n" + Block("if (i >= n) return;\n", "if (i >= n) {\n  return;\n}\n") + "```\n";
  ParsedEdits p = ParseEditBlocks(reply);
  ASSERT_EQ(p.error, "");
  EditResult r = ApplyEdits(kKernel, p.blocks);
  EXPECT_EQ(r.error, "");
  EXPECT_NE(r.text.find("  if (i >= n) {\n    return;\n  }\n"), std::string::npos) << r.text;
}

// A task whose reference is a PyTorch module (no reference kernel for the language): a request
// without a parent shows the model the module, as Python, to write the kernel from.
TEST(Prompt, ATorchTaskShowsItsModuleAsTheReference) {
  TempDir dir;
  dir.Write("model.py", "import torch\nclass Model(torch.nn.Module):\n    pass\n");
  dir.Write("task.toml", R"(name = "t"
op_class = "elementwise"
description = "a copy"
sizes = ["n"]
[[args]]
name = "x"
type = "f32"
shape = ["n"]
role = "in"
init = { dist = "normal", mean = 0.0, std = 1.0 }
[[args]]
name = "y"
type = "f32"
shape = ["n"]
role = "out"
[[args]]
name = "n"
type = "i32"
value = "n"
[[check]]
name = "small"
n = 3
[[bench]]
name = "cpu"
n = 100
[tolerance]
atol = 1e-4
rtol = 1e-4
[cost]
min_bytes = "8 * n"
[kernels]
reference = { torch = "model.py" }
)");
  Task task = LoadTask(dir.path());
  ProposalRequest r;
  r.language = Language::kOpenCL;
  ChatPrompt p = AssemblePrompt(task, r, {}, PromptSettings{});
  EXPECT_NE(p.user.find("a PyTorch module"), std::string::npos) << p.user;
  EXPECT_NE(p.user.find("```python\nimport torch\nclass Model(torch.nn.Module):"),
            std::string::npos)
      << p.user;
  EXPECT_EQ(p.user.find("The kernel to improve"), std::string::npos);
}

}  // namespace
}  // namespace kf
