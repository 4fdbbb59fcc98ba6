#pragma once
// The LLM proposer: a chat model writes the next kernel. For each request it chooses a model of
// the ensemble (a bandit on each model's graded credit, less a penalty for its cost) and prompt
// components (a bandit per kind, strategies aimed at the target cell first), assembles the
// prompt (prompt/assemble.hpp), asks, and reads the reply: a whole file or SEARCH/REPLACE edits
// of the parent. An unusable reply (no code block, cut off, an edit that does not apply, broken
// annotations) gets one short repair request, then is a counted bad reply with its reason. Every
// prompt and reply goes into the proposal's trail, which the store keeps. Graded credit for each
// proposal (Credit) moves both bandits and the components' statistics; every `meta_every`
// proposals a meta step asks the model to rewrite the weakest component (prompt/meta.hpp), and
// the new version is recorded in the journal with its parent version. The API key never enters a
// trail, a log or an error.

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/task.hpp"
#include "prompt/assemble.hpp"
#include "prompt/bandit.hpp"
#include "prompt/journal.hpp"
#include "prompt/library.hpp"
#include "propose/effects.hpp"
#include "propose/llm/chat_client.hpp"
#include "propose/llm/reply.hpp"
#include "propose/proposer.hpp"

namespace kf {

struct LlmProposerOptions {
  std::vector<ModelSettings> models;  // the ensemble; at least one
  ClientLimits limits;
  std::string prompts_dir;  // the prompt library
  ReplyFormat format = ReplyFormat::kFullFile;
  bool meta = true;            // the meta step (--no-meta switches it off)
  int meta_every = 8;          // proposals between meta steps
  int meta_min_uses = 3;       // a component is rewritten only once used this often
  int strategies = 2;          // strategy components per prompt
  double max_cost = 0;         // USD; 0 = no limit
  double cost_penalty = 0.25;  // how much a model's relative cost weighs against its credit
  // Where the chat requests go (not owned): null, this process's own client.
  ChatService* chat = nullptr;
};

class LlmProposer : public Proposer {
 public:
  // `journal` (not owned, may be null) keeps the component versions; a resumed run's are read
  // back from it.
  LlmProposer(const Task& task, LlmProposerOptions options, PromptJournal* journal);
  std::string name() const override { return "llm"; }
  ProposalOutcome Propose(const ProposalRequest& request) override;
  void Observe(const ProposalRecord& record) override;
  void Credit(const ProposalRecord& record) override;
  std::string Exhausted() const override;
  bool WritesFromScratch() const override { return true; }

  double cost() const;
  const ChatClient& client() const { return client_; }

 private:
  struct Choice {
    const ModelSettings* model = nullptr;
    std::vector<const Component*> components;
  };
  Choice Choose(const ProposalRequest& request);
  void MaybeMeta(const ProposalRequest& request, nlohmann::json& trail);
  ChatReply Ask(const ModelSettings& model, const std::vector<ChatMessage>& messages,
                nlohmann::json& trail);
  // The kernel in a reply, or the problem with it.
  std::string ReadKernel(const ProposalRequest& request, const ChatReply& reply, Kernel& kernel,
                         std::string& notes);

  const Task& task_;
  LlmProposerOptions options_;
  PromptJournal* journal_;
  ChatClient client_;
  mutable std::mutex mutex_;
  PromptLibrary library_;
  Bandit models_bandit_, components_bandit_;
  std::map<std::string, double> model_cost_;  // by label: spent so far
  std::map<std::string, int> model_uses_;
  double cost_ = 0;
  std::deque<std::string> failures_;  // recent failures, for the meta step
};

}  // namespace kf
