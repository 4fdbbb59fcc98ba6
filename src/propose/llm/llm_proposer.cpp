#include "propose/llm/llm_proposer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

#include "core/input_error.hpp"
#include "prompt/meta.hpp"

namespace kf {

namespace {

constexpr size_t kFailuresKept = 8;

std::string Arm(const Component& c) {
  return fmt::format("{}@{}", c.id, c.version);
}

// The target cell's levels as "dimension=level", the words components' aims use.
std::set<std::string> TargetLevels(const ProposalRequest& r) {
  std::set<std::string> out;
  if (!r.target) return out;
  for (size_t d = 0; d < r.target->cell.size() && d < r.behaviour.size(); ++d) {
    const auto& [name, levels] = r.behaviour[d];
    int level = r.target->cell[d];
    if (level >= 0 && level < static_cast<int>(levels.size()))
      out.insert(name + "=" + levels[level]);
  }
  return out;
}

}  // namespace

LlmProposer::LlmProposer(const Task& task, LlmProposerOptions options, PromptJournal* journal)
    : task_(task),
      options_(std::move(options)),
      journal_(journal),
      client_(options_.limits),
      library_(PromptLibrary::Load(options_.prompts_dir)) {
  if (options_.models.empty()) throw InputError("--llm-model", 0, "model", "no model configured");
  std::set<std::string> labels;
  for (const ModelSettings& m : options_.models) {
    if (!labels.insert(m.Label()).second)
      throw InputError("--llm-models", 0, m.Label(), "two models have this name: name them apart");
  }
  if (!journal_) return;
  std::vector<Component> stored = journal_->Stored();
  if (stored.empty()) {
    for (const Component& c : library_.components()) journal_->Record(c, {});
    return;
  }
  // A resumed run goes on with the versions it had made; their statistics are rebuilt from the
  // proposals' credit (Credit, replayed by the search).
  for (const Component& version : stored) {
    const Component* now = library_.Find(version.id);
    if (!now) continue;  // a component this library no longer has
    Component c = *now;
    c.text = version.text;
    c.version = version.version;
    c.parent_version = version.parent_version;
    c.made_by = version.made_by;
    c.stats = {};
    library_.Replace(std::move(c));
  }
}

double LlmProposer::cost() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cost_;
}

std::string LlmProposer::Exhausted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (options_.max_cost > 0 && cost_ >= options_.max_cost)
    return fmt::format("the cost limit was reached (${:.4f} of ${:.4f})", cost_, options_.max_cost);
  return "";
}

LlmProposer::Choice LlmProposer::Choose(const ProposalRequest& request) {
  std::mt19937_64 rng(request.seed);
  std::lock_guard<std::mutex> lock(mutex_);
  Choice c;
  // The model: credit so far, weighted by the ensemble's weights, less its relative cost.
  std::vector<std::string> labels;
  double max_mean_cost = 0;
  auto mean_cost = [&](const std::string& label) {
    int uses = model_uses_.count(label) ? model_uses_.at(label) : 0;
    return uses > 0 ? model_cost_[label] / uses : 0.0;
  };
  for (const ModelSettings& m : options_.models) {
    labels.push_back(m.Label());
    max_mean_cost = std::max(max_mean_cost, mean_cost(m.Label()));
  }
  std::string label = models_bandit_.Choose(
      labels, 1, rng,
      [&](const std::string& l) {
        for (const ModelSettings& m : options_.models)
          if (m.Label() == l) return m.weight;
        return 1.0;
      },
      [&](const std::string& l) {
        return max_mean_cost > 0 ? options_.cost_penalty * mean_cost(l) / max_mean_cost : 0.0;
      })[0];
  for (const ModelSettings& m : options_.models)
    if (m.Label() == label) c.model = &m;
  ++model_uses_[label];

  // The components: a bandit per kind; strategies aimed at the target cell first.
  auto pick = [&](const std::vector<const Component*>& pool, size_t k) {
    std::vector<std::string> arms;
    for (const Component* p : pool) arms.push_back(Arm(*p));
    for (const std::string& arm : components_bandit_.Choose(arms, k, rng))
      for (const Component* p : pool)
        if (Arm(*p) == arm) c.components.push_back(p);
  };
  pick(library_.OfKind("philosophy"), 1);
  std::set<std::string> target = TargetLevels(request);
  std::vector<const Component*> aimed, others;
  for (const Component* s : library_.OfKind("strategy")) {
    bool hits = std::any_of(s->aims.begin(), s->aims.end(),
                            [&](const std::string& a) { return target.count(a) > 0; });
    (hits ? aimed : others).push_back(s);
  }
  size_t want = static_cast<size_t>(std::max(0, options_.strategies));
  size_t from_aimed = std::min(want, aimed.size());
  pick(aimed, from_aimed);
  pick(others, want - from_aimed);
  pick(library_.OfKind("pitfall"), 2);
  pick(library_.OfKind("analysis"), 1);
  return c;
}

ChatReply LlmProposer::Ask(const ModelSettings& model, const std::vector<ChatMessage>& messages,
                           nlohmann::json& trail) {
  ChatReply r = options_.chat && options_.chat->Available()
                    ? options_.chat->Complete(model, messages)
                    : client_.Complete(model, messages);
  double cost = model.Cost(r.prompt_tokens, r.completion_tokens);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cost_ += cost;
    model_cost_[model.Label()] += cost;
  }
  trail["cost"] = trail.value("cost", 0.0) + cost;
  trail["prompt_tokens"] = trail.value("prompt_tokens", 0) + r.prompt_tokens;
  trail["completion_tokens"] = trail.value("completion_tokens", 0) + r.completion_tokens;
  nlohmann::json exchange = {{"model", model.Label()},
                             {"ok", r.ok},
                             {"reply", r.content},
                             {"finish_reason", r.finish_reason},
                             {"attempts", r.attempts},
                             {"http_status", r.http_status},
                             {"seconds", r.seconds},
                             {"prompt_tokens", r.prompt_tokens},
                             {"completion_tokens", r.completion_tokens},
                             {"cost", cost}};
  if (!r.ok) exchange["error"] = r.error;
  trail["exchanges"].push_back(std::move(exchange));
  return r;
}

std::string LlmProposer::ReadKernel(const ProposalRequest& request, const ChatReply& reply,
                                    Kernel& kernel, std::string& notes) {
  ReplyFormat format = request.parent ? options_.format : ReplyFormat::kFullFile;
  KernelReply k = ReadKernelReply(reply.content, reply.finish_reason, format,
                                  request.parent ? request.parent->kernel.source : "");
  if (!k.error.empty()) return k.error;
  std::string name =
      fmt::format("llm-p{}{}", request.index, request.language == Language::kCuda ? ".cu" : ".cl");
  try {
    kernel = ParseKernel(task_.PathOf(name), k.source);
  } catch (const InputError& e) {
    return std::string("the kernel's annotations: ") + e.what();
  }
  notes = k.notes;
  return "";
}

ProposalOutcome LlmProposer::Propose(const ProposalRequest& request) {
  nlohmann::json trail = {{"cost", 0.0}, {"exchanges", nlohmann::json::array()}};
  auto with_trail = [&](ProposalOutcome o) {
    o.trail = std::move(trail);
    return o;
  };
  if (std::string why = Exhausted(); !why.empty())
    return with_trail(ProposalOutcome::NothingNew(why));
  MaybeMeta(request, trail);
  Choice choice = Choose(request);
  const ModelSettings& model = *choice.model;
  trail["model"] = model.Label();
  trail["components"] = nlohmann::json::array();
  for (const Component* c : choice.components) trail["components"].push_back(Arm(*c));

  PromptSettings settings;
  settings.search_replace = options_.format == ReplyFormat::kSearchReplace && request.parent;
  int reply_tokens =
      model.max_completion_tokens > 0 ? model.max_completion_tokens : model.max_tokens;
  settings.max_chars =
      std::min(settings.max_chars, PromptCharsFor(model.context_tokens, reply_tokens));
  ChatPrompt prompt;
  {
    std::lock_guard<std::mutex> lock(mutex_);  // component texts may be rewritten meanwhile
    prompt = AssemblePrompt(task_, request, choice.components, settings);
  }
  std::vector<ChatMessage> messages = {{"system", prompt.system}, {"user", prompt.user}};
  auto keep_messages = [&] {
    trail["messages"] = nlohmann::json::array();
    for (const ChatMessage& m : messages)
      trail["messages"].push_back({{"role", m.role}, {"content", m.content}});
  };

  ChatReply reply = Ask(model, messages, trail);
  if (!reply.ok) {
    keep_messages();
    return with_trail(ProposalOutcome::BadReply("the model did not answer: " + reply.error));
  }
  Kernel kernel;
  std::string notes, problem = ReadKernel(request, reply, kernel, notes);
  if (!problem.empty()) {  // one short repair request
    trail["problems"].push_back(problem);
    messages.push_back({"assistant", reply.content});
    messages.push_back({"user", RepairRequest(problem, settings.search_replace)});
    reply = Ask(model, messages, trail);
    keep_messages();
    if (!reply.ok)
      return with_trail(
          ProposalOutcome::BadReply(problem + "; the repair request failed: " + reply.error));
    std::string again = ReadKernel(request, reply, kernel, notes);
    if (!again.empty()) {
      trail["problems"].push_back(again);
      return with_trail(ProposalOutcome::BadReply(again + " (after one repair request)"));
    }
    trail["repaired"] = true;
  }
  keep_messages();
  Proposal p;
  p.kernel = std::move(kernel);
  p.origin = fmt::format("llm {} p{}", model.Label(), request.index);
  p.notes = notes;
  if (request.parent) {
    p.parent_kernel_id = request.parent->kernel_id;
    p.parent_cell = request.parent->cell;
    p.mutations = request.parent->mutations;
  }
  p.mutations.push_back("llm");
  return with_trail(ProposalOutcome::Ok(std::move(p)));
}

void LlmProposer::MaybeMeta(const ProposalRequest& request, nlohmann::json& trail) {
  if (!options_.meta || request.index <= 0 || options_.meta_every <= 0 ||
      request.index % options_.meta_every != 0)
    return;
  Component weakest;
  ChatPrompt prompt;
  const ModelSettings* model = &options_.models.front();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Component* w = WeakestComponent(library_, options_.meta_min_uses);
    if (!w) {
      trail["meta"] = {
          {"skipped", fmt::format("no component was used {} times yet", options_.meta_min_uses)}};
      return;
    }
    weakest = *w;
    prompt = MetaPrompt(weakest, library_, {failures_.begin(), failures_.end()});
    for (const ModelSettings& m : options_.models)  // the model with the best record so far
      if (models_bandit_.Mean(m.Label()) > models_bandit_.Mean(model->Label())) model = &m;
  }
  nlohmann::json meta = {{"component", Arm(weakest)}, {"exchanges", nlohmann::json::array()}};
  ChatReply r = Ask(*model, {{"system", prompt.system}, {"user", prompt.user}}, meta);
  trail["cost"] = trail.value("cost", 0.0) + meta.value("cost", 0.0);
  if (!r.ok) {
    meta["error"] = "the model did not answer: " + r.error;
    trail["meta"] = std::move(meta);
    return;
  }
  EditResult edit = ApplyMetaReply(weakest, r.content);
  if (!edit.error.empty()) {
    meta["error"] = edit.error;
    trail["meta"] = std::move(meta);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const Component* now = library_.Find(weakest.id);
  if (!now || now->version != weakest.version) {
    meta["error"] = "the component was rewritten meanwhile";
  } else {
    const Component& made = library_.AddVersion(weakest.id, edit.text);
    meta["made"] = Arm(made);
    if (journal_) {
      journal_->Record(made, {{"proposal", request.index},
                              {"model", model->Label()},
                              {"parent_stats",
                               {{"uses", weakest.stats.uses},
                                {"mean_credit", weakest.stats.MeanCredit()},
                                {"improvements", weakest.stats.improvements}}},
                              {"prompt", prompt.user},
                              {"reply", r.content}});
    }
  }
  trail["meta"] = std::move(meta);
}

void LlmProposer::Observe(const ProposalRecord& record) {
  const nlohmann::json trail = record.outcome.value("proposer", nlohmann::json::object());
  if (!trail.contains("model")) return;
  std::lock_guard<std::mutex> lock(mutex_);
  double cost = trail.value("cost", 0.0);
  cost_ += cost;
  std::string label = trail["model"].get<std::string>();
  model_cost_[label] += cost;
  ++model_uses_[label];
}

void LlmProposer::Credit(const ProposalRecord& record) {
  const nlohmann::json trail = record.outcome.value("proposer", nlohmann::json::object());
  if (!trail.contains("model")) return;
  int grade = static_cast<int>(record.grade());
  double credit = GradeCredit(grade), gain = record.outcome.value("gain", 0.0);
  std::lock_guard<std::mutex> lock(mutex_);
  models_bandit_.Reward(trail["model"].get<std::string>(), credit);
  for (const auto& arm : trail.value("components", nlohmann::json::array())) {
    std::string text = arm.get<std::string>();
    components_bandit_.Reward(text, credit);
    size_t at = text.rfind('@');
    std::string id = text.substr(0, at);
    const Component* c = library_.Find(id);
    // The statistics are the current version's: a proposal made with an older one credits it
    // in the bandit alone.
    if (!c || Arm(*c) != text) continue;
    library_.Credit(id, grade, gain);
    if (journal_) journal_->Record(*library_.Find(id), {});
  }
  if (grade <= static_cast<int>(Grade::kIncorrect)) {
    std::string why = record.outcome.value("reason", record.outcome.value("failure", ""));
    if (!why.empty()) {
      failures_.push_back(fmt::format("{}: {}", ProposalStateName(record.state), why));
      if (failures_.size() > kFailuresKept) failures_.pop_front();
    }
  }
}

}  // namespace kf
