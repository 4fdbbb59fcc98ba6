#pragma once
// The `command` proposer: any executable writes the next kernel. It is run with `/bin/sh -c CMD`
// once per proposal, reads one JSON proposal request on stdin (docs/proposers.md has the schema)
// and writes on stdout either a kernel source or a JSON object
//   {"source": "...", "name": "...", "notes": "..."}   or   {"nothing_new": true, "notes": "..."}
// It gets a deadline and a bounded output size; a late, oversized, failing, empty or unparsable
// reply (a kernel without its @kernel/@grid/@block annotations) is a counted `bad_reply` with the
// reason, never a crash. Its stderr is passed on to ours, line by line, prefixed.

#include <cstddef>
#include <string>

#include "core/task.hpp"
#include "propose/effects.hpp"
#include "propose/proposer.hpp"

namespace kf {

struct CommandProposerOptions {
  std::string command;  // "PROGRAM ARGS", run by /bin/sh -c
  double timeout_s = 300;
  size_t max_output_bytes = size_t{1} << 20;
  CommandService* runner = nullptr;  // where the command runs (not owned); null: here
};

class CommandProposer : public Proposer {
 public:
  CommandProposer(const Task& task, CommandProposerOptions options);
  std::string name() const override { return "command"; }
  ProposalOutcome Propose(const ProposalRequest& request) override;
  bool WritesFromScratch() const override { return true; }

 private:
  const Task& task_;
  CommandProposerOptions options_;
};

// What a proposer's reply holds: a kernel source (raw, or in a JSON object) or nothing new; the
// outcome has no kernel yet when it is ok. Shared by every proposer that reads text replies.
struct ReplyText {
  bool nothing_new = false;
  std::string source, name, notes;
  std::string error;  // why the reply is unusable; "" when it is usable
};
ReplyText ParseReplyText(const std::string& out);

}  // namespace kf
