#include "core/run_settings.hpp"

#include "core/codec.hpp"

namespace kf {

namespace {

nlohmann::json LlmToJson(const LlmSettings& l) {
  return {{"base_url", l.base_url},
          {"model", l.model},
          {"models_file", l.models_file},
          {"reply", l.reply},
          {"prompts", l.prompts_dir},
          {"temperature", l.temperature},
          {"max_tokens", l.max_tokens},
          {"timeout", l.timeout_s},
          {"retries", l.retries},
          {"concurrency", l.concurrency},
          {"tokens_per_minute", l.tokens_per_minute},
          {"max_cost", l.max_cost},
          {"meta", l.meta},
          {"meta_every", l.meta_every},
          {"meta_min_uses", l.meta_min_uses}};
}

LlmSettings LlmFromJson(const nlohmann::json& j) {
  LlmSettings l;
  l.base_url = j.value("base_url", l.base_url);
  l.model = j.value("model", l.model);
  l.models_file = j.value("models_file", l.models_file);
  l.reply = j.value("reply", l.reply);
  l.prompts_dir = j.value("prompts", l.prompts_dir);
  l.temperature = j.value("temperature", l.temperature);
  l.max_tokens = j.value("max_tokens", l.max_tokens);
  l.timeout_s = j.value("timeout", l.timeout_s);
  l.retries = j.value("retries", l.retries);
  l.concurrency = j.value("concurrency", l.concurrency);
  l.tokens_per_minute = j.value("tokens_per_minute", l.tokens_per_minute);
  l.max_cost = j.value("max_cost", l.max_cost);
  l.meta = j.value("meta", l.meta);
  l.meta_every = j.value("meta_every", l.meta_every);
  l.meta_min_uses = j.value("meta_min_uses", l.meta_min_uses);
  return l;
}

}  // namespace

// One flat object (the shape runs have been stored in since the first store), the model's
// settings under "llm" and the judging's under "judging".
nlohmann::json RunSettingsToJson(const RunSettings& s) {
  return {{"task_dir", s.task_dir},
          {"task_variant", s.task_variant},
          {"out", s.out_dir},
          {"device", s.device},
          {"sizes", s.sizes},
          {"budget", s.search.budget},
          {"seconds", s.search.seconds},
          {"tune_budget", s.search.tune_budget},
          {"in_flight", s.search.in_flight},
          {"seed", s.search.seed},
          {"selection", s.search.selection},
          {"strategy", s.search.strategy},
          {"inspirations", s.search.inspirations},
          {"max_empty_proposals", s.search.max_empty_proposals},
          {"no_rules", !s.search.use_rules},
          {"rules_dir", s.search.rules_dir},
          {"proposer", s.proposer.kind},
          {"proposer_cmd", s.proposer.command},
          {"proposer_timeout", s.proposer.timeout_s},
          {"llm", LlmToJson(s.proposer.llm)},
          {"judging", EvalSettingsToJson(s.judging)},
          {"top", s.final.top},
          {"repeats", s.final.repeats}};
}

RunSettings RunSettingsFromJson(const nlohmann::json& j) {
  RunSettings s;
  s.task_dir = j.value("task_dir", s.task_dir);
  s.task_variant = j.value("task_variant", s.task_variant);
  s.out_dir = j.value("out", s.out_dir);
  s.device = j.value("device", s.device);
  s.sizes = j.value("sizes", s.sizes);
  SearchPolicy& p = s.search;
  p.budget = j.value("budget", p.budget);
  p.seconds = j.value("seconds", p.seconds);
  p.tune_budget = j.value("tune_budget", p.tune_budget);
  p.in_flight = j.value("in_flight", p.in_flight);
  p.seed = j.value("seed", p.seed);
  p.selection = j.value("selection", p.selection);
  p.strategy = j.value("strategy", p.strategy);
  p.inspirations = j.value("inspirations", p.inspirations);
  p.max_empty_proposals = j.value("max_empty_proposals", p.max_empty_proposals);
  p.use_rules = !j.value("no_rules", !p.use_rules);
  p.rules_dir = j.value("rules_dir", p.rules_dir);
  s.proposer.kind = j.value("proposer", s.proposer.kind);
  s.proposer.command = j.value("proposer_cmd", s.proposer.command);
  s.proposer.timeout_s = j.value("proposer_timeout", s.proposer.timeout_s);
  if (j.contains("llm")) s.proposer.llm = LlmFromJson(j.at("llm"));
  if (j.contains("judging")) s.judging = EvalSettingsFromJson(j.at("judging"));
  s.final.top = j.value("top", s.final.top);
  s.final.repeats = j.value("repeats", s.final.repeats);
  return s;
}

}  // namespace kf
