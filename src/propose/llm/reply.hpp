#pragma once
// What a model's reply holds: the kernel it proposes (a whole file in a fenced code block, or
// SEARCH/REPLACE edits of the parent) and its notes. A reply that holds no usable kernel is an
// error message fit to show the model; annotations are not checked here (the caller parses the
// kernel and reports that).

#include <string>

namespace kf {

enum class ReplyFormat { kFullFile, kSearchReplace };

struct KernelReply {
  std::string source;   // the whole kernel after any edits; "" when error
  std::string notes;    // the prose outside code and edit blocks, trimmed, at most 2000 bytes
  std::string error;    // "" when usable
  bool edited = false;  // made by SEARCH/REPLACE against the parent
};

// Full file: the last fenced code block (any info string, or none) that contains "@kernel", else
// the longest one; edit blocks in place of a file are applied to the parent. SEARCH/REPLACE: the
// edit blocks applied to `parent_source` in order; a reply with no edit blocks but a whole file
// with "@kernel" gives that file. `finish_reason` "length" (or "max_tokens") marks a reply cut off
// by the token limit: an unclosed block then says so. <think> sections are ignored.
KernelReply ReadKernelReply(const std::string& reply, const std::string& finish_reason,
                            ReplyFormat format, const std::string& parent_source);

}  // namespace kf
