#include "propose/llm/reply.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "prompt/search_replace.hpp"

namespace kf {

namespace {

constexpr size_t kMaxNotes = 2000;
constexpr std::string_view kSpace = " \t\r\n";

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// The reply without its <think>...</think> sections. `cut_off` is set when one is not closed.
std::string WithoutThinking(std::string text, bool& cut_off) {
  constexpr std::string_view kOpen = "<think>", kClose = "</think>";
  for (size_t open = text.find(kOpen); open != std::string::npos; open = text.find(kOpen, open)) {
    size_t close = text.find(kClose, open);
    if (close == std::string::npos) {
      text.erase(open);
      cut_off = true;
      break;
    }
    text.erase(open, close + kClose.size() - open);
  }
  // Some servers send the opening tag in the prompt, so only its end shows.
  if (size_t close = text.find(kClose); close != std::string::npos)
    text.erase(0, close + kClose.size());
  return text;
}

struct CodeBlock {
  size_t begin = 0, end = 0;  // the whole block, fences included
  std::string content;
  bool closed = false;
};

// The opening fence's character and length, when `line` opens a fenced block (``` or ~~~).
std::pair<char, size_t> Fence(std::string_view line) {
  line = Trim(line);
  if (line.empty() || (line[0] != '`' && line[0] != '~')) return {0, 0};
  size_t n = line.find_first_not_of(line[0]);
  if (n == std::string_view::npos) n = line.size();
  if (n < 3) return {0, 0};
  if (line[0] == '`' && line.find('`', n) != std::string_view::npos) return {0, 0};  // inline
  return {line[0], n};
}

std::vector<CodeBlock> CodeBlocks(std::string_view text) {
  std::vector<CodeBlock> blocks;
  CodeBlock* open = nullptr;
  char fence_char = 0;
  size_t fence_len = 0, content_begin = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t next = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view line = text.substr(pos, next - pos);
    if (!open) {
      auto [c, n] = Fence(line);
      if (n > 0) {
        blocks.push_back({pos, text.size(), "", false});
        open = &blocks.back();
        fence_char = c;
        fence_len = n;
        content_begin = next;
      }
    } else {
      std::string_view t = Trim(line);
      if (t.size() >= fence_len && t.find_first_not_of(fence_char) == std::string_view::npos) {
        open->content = std::string(text.substr(content_begin, pos - content_begin));
        open->end = next;
        open->closed = true;
        open = nullptr;
      }
    }
    pos = next;
  }
  if (open) open->content = std::string(text.substr(content_begin));
  return blocks;
}

// The prose: the text outside code blocks and outside SEARCH/REPLACE blocks, trimmed, with runs
// of blank lines collapsed, cut to kMaxNotes bytes on a character boundary.
std::string Notes(std::string_view text, const std::vector<CodeBlock>& blocks) {
  std::string outside;
  size_t pos = 0;
  for (const CodeBlock& b : blocks) {
    outside += text.substr(pos, b.begin - pos);
    outside += "\n";
    pos = b.end;
  }
  outside += text.substr(std::min(pos, text.size()));
  std::string notes;
  bool in_edit = false;
  int blank = 0;
  size_t at = 0;
  while (at < outside.size()) {
    size_t nl = outside.find('\n', at);
    if (nl == std::string::npos) nl = outside.size();
    std::string_view line = std::string_view(outside).substr(at, nl - at);
    at = nl + 1;
    std::string_view t = Trim(line);
    if (t.starts_with("<<<<<")) in_edit = true;
    bool skip = in_edit;
    if (in_edit && t.starts_with(">>>>>")) in_edit = false;
    if (skip) continue;
    if (t.empty()) {
      if (++blank > 1) continue;
    } else {
      blank = 0;
    }
    notes += std::string(line.substr(0, line.find_last_not_of(kSpace) + 1)) + "\n";
  }
  notes = std::string(Trim(notes));
  if (notes.size() > kMaxNotes) {
    size_t cut = kMaxNotes;
    while (cut > 0 && (static_cast<unsigned char>(notes[cut]) & 0xC0) == 0x80) --cut;
    notes.resize(cut);
  }
  return notes;
}

// A closed block that holds a file, not SEARCH/REPLACE edits (whose lines may name @kernel).
bool HoldsFile(const CodeBlock& b) {
  if (!b.closed) return false;
  ParsedEdits edits = ParseEditBlocks(b.content);
  return edits.blocks.empty() && edits.error.empty();
}

const CodeBlock* LastWithKernel(const std::vector<CodeBlock>& blocks) {
  for (size_t i = blocks.size(); i-- > 0;) {
    const CodeBlock& b = blocks[i];
    if (b.content.find("@kernel") != std::string::npos && HoldsFile(b)) return &b;
  }
  return nullptr;
}

const CodeBlock* Longest(const std::vector<CodeBlock>& blocks) {
  const CodeBlock* best = nullptr;
  for (const CodeBlock& b : blocks) {
    if (HoldsFile(b) && (!best || b.content.size() > best->content.size())) best = &b;
  }
  return best;
}

bool HasUnclosed(const std::vector<CodeBlock>& blocks) {
  return !blocks.empty() && !blocks.back().closed;
}

struct Context {
  std::string_view text;
  const std::vector<CodeBlock>& blocks;
  bool truncated;             // the token limit ended the reply
  std::string finish_reason;  // as the server gave it
  const std::string& parent;
};

std::string CutOff(const Context& c) {
  return c.truncated ? fmt::format("the reply was cut off (finish_reason {})", c.finish_reason)
                     : "the code block is not closed: the reply was cut off";
}

void ApplyTo(KernelReply& r, const Context& c, const std::vector<EditBlock>& edits) {
  EditResult applied = ApplyEdits(c.parent, edits, "the parent");
  if (!applied.error.empty()) {
    r.error = applied.error;
    return;
  }
  r.source = std::move(applied.text);
  r.edited = true;
}

void ReadFullFile(KernelReply& r, const Context& c) {
  if (const CodeBlock* b = LastWithKernel(c.blocks)) {
    r.source = b->content;
    return;
  }
  if (HasUnclosed(c.blocks)) {
    r.error = CutOff(c);
    return;
  }
  if (!c.parent.empty()) {  // edits where a whole file was asked for
    ParsedEdits parsed = ParseEditBlocks(c.text);
    if (parsed.error.empty() && !parsed.blocks.empty()) return ApplyTo(r, c, parsed.blocks);
  }
  if (const CodeBlock* b = Longest(c.blocks)) {
    r.source = b->content;
    return;
  }
  r.error = c.truncated ? CutOff(c) : "no code block in the reply";
}

void ReadSearchReplace(KernelReply& r, const Context& c) {
  ParsedEdits parsed = ParseEditBlocks(c.text);
  if (!parsed.error.empty()) {
    r.error = c.truncated ? CutOff(c) : "SEARCH/REPLACE " + parsed.error;
    return;
  }
  if (!parsed.blocks.empty()) return ApplyTo(r, c, parsed.blocks);
  if (const CodeBlock* b = LastWithKernel(c.blocks)) {  // a whole file instead of edits
    r.source = b->content;
    return;
  }
  if (HasUnclosed(c.blocks) || c.truncated) {
    r.error = CutOff(c);
    return;
  }
  r.error = "no SEARCH/REPLACE block in the reply";
}

}  // namespace

KernelReply ReadKernelReply(const std::string& reply, const std::string& finish_reason,
                            ReplyFormat format, const std::string& parent_source) {
  bool thinking_cut_off = false;
  std::string text = WithoutThinking(reply, thinking_cut_off);
  std::vector<CodeBlock> blocks = CodeBlocks(text);
  bool truncated = finish_reason == "length" || finish_reason == "max_tokens";
  Context c{text, blocks, truncated, finish_reason, parent_source};
  KernelReply r;
  r.notes = Notes(text, blocks);
  if (thinking_cut_off) {
    r.error = truncated ? CutOff(c) : "the reply ended inside <think>: it was cut off";
    return r;
  }
  if (format == ReplyFormat::kFullFile) {
    ReadFullFile(r, c);
  } else {
    ReadSearchReplace(r, c);
  }
  if (!r.error.empty()) r.source.clear();
  return r;
}

}  // namespace kf
