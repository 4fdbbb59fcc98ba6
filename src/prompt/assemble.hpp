#pragma once
// Prompt assembly: a proposal request (the task, the device and its hints, the parent with its
// evaluation, the best so far, inspirations, the target cell) and the chosen prompt components
// become one chat prompt asking for one kernel in a stated answer format. Sections are cut to
// a character budget, the least needed first (inspirations, then the best, then logs, then the
// reference), so a prompt never exceeds the model's context.

#include <string>
#include <vector>

#include "core/proposal.hpp"
#include "prompt/library.hpp"

namespace kf {

struct PromptSettings {
  size_t max_chars = 48000;     // the whole prompt (≈ 4 characters a token)
  size_t log_chars = 1500;      // a compile log excerpt
  bool search_replace = false;  // ask for SEARCH/REPLACE blocks against the parent
};

struct ChatPrompt {
  std::string system, user;
};

// The characters a model with `context_tokens` of context and `reply_tokens` for its reply
// leaves to the prompt (4 a token, a tenth kept in reserve).
size_t PromptCharsFor(int context_tokens, int reply_tokens);

// "memory: vectorised; algorithm: looped; coordination: independent", from the request's words.
std::string DescribeCell(const ProposalRequest& request, const Cell& cell);

// `task` is the request's (request.task_id is its id).
ChatPrompt AssemblePrompt(const Task& task, const ProposalRequest& request,
                          const std::vector<const Component*>& components,
                          const PromptSettings& settings);

// The short follow-up that asks once for a repair of an unusable reply.
std::string RepairRequest(const std::string& problem, bool search_replace);

// `text` cut to `limit` characters: its head and tail with a note of what was left out.
std::string CutMiddle(const std::string& text, size_t limit);

}  // namespace kf
