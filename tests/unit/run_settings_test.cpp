// A run's settings as one value: every field survives its codec, a run stored before the value
// existed decodes to what it was run with, and no secret is part of it.

#include "core/run_settings.hpp"

#include <gtest/gtest.h>

namespace kf {
namespace {

RunSettings Unusual() {
  RunSettings s;
  s.task_dir = "/work/tasks/rmsnorm";
  s.out_dir = "/tmp/out";
  s.device = "cuda:0,cuda:1";
  s.sizes = "small";
  s.search.budget = 321;
  s.search.seconds = 12.5;
  s.search.tune_budget = 9;
  s.search.in_flight = 6;
  s.search.seed = 18446744073709551557ull;  // past 2^63: stored as an unsigned number
  s.search.selection = "curiosity";
  s.search.strategy = "genetic";
  s.search.inspirations = 3;
  s.search.max_empty_proposals = 7;
  s.search.use_rules = false;
  s.search.rules_dir = "/r";
  s.proposer.kind = "llm";
  s.proposer.command = "python3 p.py";
  s.proposer.timeout_s = 42;
  s.proposer.llm.base_url = "http://127.0.0.1:9/v1";
  s.proposer.llm.model = "coder";
  s.proposer.llm.models_file = "models.toml";
  s.proposer.llm.prompts_dir = "prompts2";
  s.proposer.llm.reply = "diff";
  s.proposer.llm.temperature = 0.3;
  s.proposer.llm.timeout_s = 30;
  s.proposer.llm.tokens_per_minute = 1000;
  s.proposer.llm.max_cost = 2.5;
  s.proposer.llm.max_tokens = 4096;
  s.proposer.llm.retries = 1;
  s.proposer.llm.concurrency = 5;
  s.proposer.llm.meta = false;
  s.proposer.llm.meta_every = 11;
  s.proposer.llm.meta_min_uses = 4;
  s.judging.check_seeds = 5;
  s.judging.max_runs = 77;
  s.final.top = 4;
  s.final.repeats = 6;
  return s;
}

TEST(RunSettings, EveryFieldSurvivesTheCodec) {
  RunSettings s = Unusual();
  nlohmann::json j = RunSettingsToJson(s);
  RunSettings back = RunSettingsFromJson(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(RunSettingsToJson(back), j);
  EXPECT_EQ(back.search.seed, s.search.seed);
  EXPECT_EQ(back.search.selection, "curiosity");
  EXPECT_FALSE(back.search.use_rules);
  EXPECT_EQ(back.proposer.llm.reply, "diff");
  EXPECT_FALSE(back.proposer.llm.meta);
  EXPECT_EQ(back.judging.check_seeds, 5);
  EXPECT_EQ(back.judging.max_runs, 77);
  EXPECT_EQ(back.final.repeats, 6);
  // Every field is written: an object with one field changed is another object.
  RunSettings other = s;
  other.proposer.llm.meta_min_uses = 5;
  EXPECT_NE(RunSettingsToJson(other), j);
}

TEST(RunSettings, ARunStoredBeforeTheValueResumesWithItsSettings) {
  // The object `optimize` stored with its runs before RunSettings (keys as they were written).
  nlohmann::json stored = nlohmann::json::parse(R"({
    "task_dir": "/t/softmax_rows", "out": "/o", "top": 2, "repeats": 5, "budget": 150,
    "tune_budget": 8, "seed": 7, "selection": "fitness", "strategy": "random",
    "proposer": "command", "proposer_cmd": "python3 walk.py", "proposer_timeout": 60,
    "in_flight": 4, "sizes": "", "seconds": 90, "no_rules": true, "rules_dir": "",
    "device": "opencl:0",
    "llm": {"base_url": "", "model": "", "models_file": "", "reply": "file", "prompts": "",
            "temperature": -2, "max_tokens": 0, "timeout": 300, "retries": 4,
            "concurrency": 0, "tokens_per_minute": 0, "max_cost": 0, "meta": true,
            "meta_every": 8, "meta_min_uses": 3},
    "judging": {"check_seeds": 3, "warmup_runs": 2, "min_runs": 5, "max_runs": 50}})");
  RunSettings s = RunSettingsFromJson(stored);
  EXPECT_EQ(s.task_dir, "/t/softmax_rows");
  EXPECT_EQ(s.out_dir, "/o");
  EXPECT_EQ(s.final.top, 2);
  EXPECT_EQ(s.final.repeats, 5);
  EXPECT_EQ(s.search.budget, 150);
  EXPECT_EQ(s.search.tune_budget, 8);
  EXPECT_EQ(s.search.seed, 7u);
  EXPECT_EQ(s.search.selection, "fitness");
  EXPECT_EQ(s.search.in_flight, 4);
  EXPECT_EQ(s.search.seconds, 90);
  EXPECT_FALSE(s.search.use_rules);
  EXPECT_EQ(s.proposer.kind, "command");
  EXPECT_EQ(s.proposer.command, "python3 walk.py");
  EXPECT_EQ(s.proposer.timeout_s, 60);
  EXPECT_EQ(s.device, "opencl:0");
  EXPECT_EQ(s.judging.check_seeds, 3);
  EXPECT_EQ(s.search.inspirations, 2) << "a field the old object lacks keeps its default";
  // Re-encoded, it keeps every stored key with its value.
  nlohmann::json again = RunSettingsToJson(s);
  for (const auto& [key, value] : stored.items()) {
    if (key == "judging") continue;  // the codec writes every judging field
    EXPECT_EQ(again.at(key), value) << key;
  }
}

TEST(RunSettings, MissingFieldsKeepTheirDefaultsAndAWrongTypeIsAnError) {
  RunSettings s = RunSettingsFromJson(nlohmann::json::object());
  EXPECT_EQ(RunSettingsToJson(s), RunSettingsToJson(RunSettings{}));
  EXPECT_EQ(s.judging.max_runs, EvalSettings::Fast().max_runs) << "a search judges fast";
  EXPECT_THROW(RunSettingsFromJson({{"budget", "many"}}), nlohmann::json::exception);
  EXPECT_THROW(RunSettingsFromJson({{"llm", {{"meta", "yes"}}}}), nlohmann::json::exception);
}

TEST(RunSettings, NoSecretIsPartOfIt) {
  std::string text = RunSettingsToJson(Unusual()).dump();
  EXPECT_EQ(text.find("key"), std::string::npos) << text;
  EXPECT_EQ(text.find("password"), std::string::npos) << text;
}

}  // namespace
}  // namespace kf
