#include "cli/llm_setup.hpp"

#include <fmt/format.h>

#include "prompt/journal.hpp"
#include "propose/llm/llm_config.hpp"
#include "propose/llm/llm_proposer.hpp"

namespace kf {

namespace {

// The store as the journal of a run's prompt component versions.
class StorePromptJournal : public PromptJournal {
 public:
  StorePromptJournal(Store& store, std::string run) : store_(store), run_(std::move(run)) {}

  void Record(const Component& c, const nlohmann::json& meta) override {
    PromptVersionRecord v;
    v.component = c.id;
    v.version = c.version;
    v.parent_version = c.parent_version;
    v.made_by = c.made_by;
    v.text = c.text;
    v.stats = {{"uses", c.stats.uses},
               {"improvements", c.stats.improvements},
               {"credit", c.stats.credit},
               {"gain", c.stats.gain}};
    v.meta = meta.is_object() ? meta : nlohmann::json::object();
    store_.PutPromptVersion(run_, v);
  }

  std::vector<Component> Stored() override {
    std::vector<Component> out;
    for (const PromptVersionRecord& v : store_.RunPromptVersions(run_)) {
      Component c;
      c.id = v.component;
      c.version = v.version;
      c.parent_version = v.parent_version;
      c.made_by = v.made_by;
      c.text = v.text;
      out.push_back(std::move(c));
    }
    return out;
  }

 private:
  Store& store_;
  std::string run_;
};

}  // namespace

LlmProposerSetup MakeLlmProposer(const OptimizeArgs& a, const Task& task, Store& store,
                                 const std::string& run) {
  LlmFlags flags;
  flags.base_url = a.llm_base_url;
  flags.model = a.llm_model;
  flags.api_key = a.llm_api_key;
  flags.models_file = a.llm_models_file;
  flags.temperature = a.llm_temperature;
  flags.max_tokens = a.llm_max_tokens;
  LlmProposerOptions o;
  o.models = ResolveModels(flags);
  o.limits.timeout_s = a.llm_timeout_s;
  o.limits.max_retries = a.llm_retries;
  o.limits.concurrency = a.llm_concurrency > 0 ? a.llm_concurrency : a.in_flight;
  o.limits.tokens_per_minute = a.llm_tokens_per_minute;
  o.prompts_dir = a.prompts_dir.empty() ? DefaultPromptsDir() : a.prompts_dir;
  o.format = a.llm_reply == "diff" ? ReplyFormat::kSearchReplace : ReplyFormat::kFullFile;
  o.meta = !a.no_meta;
  o.meta_every = a.meta_every;
  o.meta_min_uses = a.meta_min_uses;
  o.max_cost = a.max_cost;
  LlmProposerSetup setup;
  setup.journal = std::make_unique<StorePromptJournal>(store, run);
  std::string names;
  for (const ModelSettings& m : o.models) names += (names.empty() ? "" : ", ") + m.Label();
  setup.description = fmt::format("{} model{} ({}) at {}", o.models.size(),
                                  o.models.size() == 1 ? "" : "s", names, o.models[0].base_url);
  setup.proposer = std::make_unique<LlmProposer>(task, std::move(o), setup.journal.get());
  return setup;
}

}  // namespace kf
