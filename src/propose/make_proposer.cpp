#include "propose/make_proposer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/input_error.hpp"
#include "propose/command/command_proposer.hpp"
#include "propose/llm/llm_config.hpp"
#include "propose/llm/llm_proposer.hpp"

namespace kf {

const std::vector<std::string>& ProposerKinds() {
  static const std::vector<std::string> kinds = {"builtin", "command", "llm"};
  return kinds;
}

namespace {

MadeProposer MakeLlm(const LlmSettings& l, const Task& task, const ProposerContext& c) {
  LlmFlags flags;
  flags.base_url = l.base_url;
  flags.model = l.model;
  flags.api_key = c.api_key;
  flags.models_file = l.models_file;
  flags.temperature = l.temperature;
  flags.max_tokens = l.max_tokens;
  LlmProposerOptions o;
  o.models = ResolveModels(flags);
  o.limits.timeout_s = l.timeout_s;
  o.limits.max_retries = l.retries;
  o.limits.concurrency = l.concurrency > 0 ? l.concurrency : c.in_flight;
  o.limits.tokens_per_minute = l.tokens_per_minute;
  o.prompts_dir = l.prompts_dir.empty() ? DefaultPromptsDir() : l.prompts_dir;
  o.format = l.reply == "diff" ? ReplyFormat::kSearchReplace : ReplyFormat::kFullFile;
  o.meta = l.meta;
  o.meta_every = l.meta_every;
  o.meta_min_uses = l.meta_min_uses;
  o.max_cost = l.max_cost;
  o.chat = c.chat;
  MadeProposer made;
  std::string names;
  for (const ModelSettings& m : o.models) names += (names.empty() ? "" : ", ") + m.Label();
  made.description = fmt::format("{} model{} ({}) at {}", o.models.size(),
                                 o.models.size() == 1 ? "" : "s", names, o.models[0].base_url);
  made.proposer = std::make_unique<LlmProposer>(task, std::move(o), c.journal);
  return made;
}

}  // namespace

void CheckProposerSettings(const ProposerSettings& s) {
  const std::vector<std::string>& kinds = ProposerKinds();
  if (std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end()) {
    std::string known;
    for (const std::string& k : kinds) known += (known.empty() ? "" : ", ") + k;
    throw InputError("--proposer", 0, s.kind, "unknown proposer (known: " + known + ")");
  }
  if (s.llm.reply != "file" && s.llm.reply != "diff")
    throw InputError("--llm-reply", 0, s.llm.reply, "unknown reply format (known: file, diff)");
  if (s.kind == "command" && s.command.empty())
    throw InputError(
        "--proposer-cmd", 0, "CMD",
        "--proposer command needs the command to run (--proposer-cmd \"PROGRAM ARGS\")");
}

MadeProposer MakeProposer(const ProposerSettings& s, const Task& task, const ProposerContext& c) {
  CheckProposerSettings(s);
  if (s.kind == "llm") return MakeLlm(s.llm, task, c);
  MadeProposer made;
  if (s.kind == "command") {
    made.proposer = std::make_unique<CommandProposer>(
        task, CommandProposerOptions{s.command, s.timeout_s, size_t{1} << 20, c.commands});
    made.description = "command: " + s.command;
    return made;
  }
  made.proposer = std::make_unique<BuiltinProposer>(task, c.language, c.predict);
  made.description = "builtin";
  return made;
}

}  // namespace kf
