#include "prompt/search_replace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace kf {

namespace {

constexpr std::string_view kSpace = " \t\r\n\f\v";

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

std::string_view LeadingSpace(std::string_view s) {
  return s.substr(0, std::min(s.find_first_not_of(" \t"), s.size()));
}

bool IsBlank(std::string_view s) {
  return Trim(s).empty();
}

enum class Marker { kNone, kSearch, kDivider, kReplace };

// A marker line: 5 to 9 of `c`, then `word` (for the divider, nothing), spaces allowed around.
bool IsMarker(std::string_view line, char c, std::string_view word) {
  line = Trim(line);
  size_t n = 0;
  while (n < line.size() && line[n] == c) ++n;
  if (n < 5 || n > 9) return false;
  return Trim(line.substr(n)) == word;
}

Marker MarkerOf(std::string_view line) {
  if (IsMarker(line, '<', "SEARCH")) return Marker::kSearch;
  if (IsMarker(line, '=', "")) return Marker::kDivider;
  if (IsMarker(line, '>', "REPLACE")) return Marker::kReplace;
  return Marker::kNone;
}

// The first non-blank line of `text`, trimmed and cut to 80 characters, for error messages.
std::string Quote(std::string_view text) {
  std::string_view line;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    line = Trim(text.substr(0, nl));
    if (!line.empty() || nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  if (line.size() <= 80) return std::string(line);
  size_t cut = 77;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return std::string(line.substr(0, cut)) + "...";
}

struct Line {
  size_t begin, end;  // [begin, end): the line's text, without '\r' or '\n'
  size_t next;        // where the next line begins (past the '\n', or the text's end)
  bool crlf = false;  // ended in "\r\n"
  bool newline = false;
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    Line l{pos, nl == std::string_view::npos ? text.size() : nl, 0};
    l.next = nl == std::string_view::npos ? text.size() : nl + 1;
    l.newline = nl != std::string_view::npos;
    if (l.newline && l.end > l.begin && text[l.end - 1] == '\r') {
      --l.end;
      l.crlf = true;
    }
    lines.push_back(l);
    pos = l.next;
  }
  return lines;
}

std::vector<std::string_view> LinesOf(std::string_view text) {
  std::vector<std::string_view> out;
  for (const Line& l : SplitLines(text)) out.push_back(text.substr(l.begin, l.end - l.begin));
  return out;
}

// Places where `search` occurs as whole lines of `text`.
std::vector<size_t> ExactMatches(std::string_view text, std::string_view search) {
  std::vector<size_t> at;
  for (size_t pos = text.find(search); pos != std::string_view::npos;
       pos = text.find(search, pos + 1)) {
    size_t end = pos + search.size();
    bool starts_line = pos == 0 || text[pos - 1] == '\n';
    bool ends_line =
        search.back() == '\n' || end == text.size() || text[end] == '\n' || text[end] == '\r';
    if (starts_line && ends_line) at.push_back(pos);
  }
  return at;
}

struct LooseMatch {
  size_t first, last;  // line indices, inclusive
};

// Matches of the non-blank lines of `search`, trimmed, against the lines of `text`, trimmed, with
// blank lines skipped.
std::vector<LooseMatch> LooseMatches(std::string_view text, const std::vector<Line>& lines,
                                     const std::vector<std::string_view>& wanted) {
  auto trimmed = [&](size_t i) {
    return Trim(text.substr(lines[i].begin, lines[i].end - lines[i].begin));
  };
  std::vector<LooseMatch> out;
  for (size_t first = 0; first < lines.size(); ++first) {
    if (trimmed(first) != wanted[0]) continue;
    size_t j = first + 1, k = 1;
    for (; k < wanted.size(); ++k, ++j) {
      while (j < lines.size() && trimmed(j).empty()) ++j;
      if (j == lines.size() || trimmed(j) != wanted[k]) break;
    }
    if (k == wanted.size()) out.push_back({first, j - 1});
  }
  return out;
}

// `line` moved from the SEARCH's indentation `from` to the original's `to`.
std::string Reindent(std::string_view line, std::string_view from, std::string_view to) {
  if (IsBlank(line)) return "";
  std::string_view lead = LeadingSpace(line);
  if (lead.substr(0, from.size()) == from)
    return std::string(to) + std::string(line.substr(from.size()));
  // Indented less than the first line: shift by the same number of columns when the indentation
  // is all one character.
  char c = !to.empty() ? to[0] : !from.empty() ? from[0] : ' ';
  auto uniform = [c](std::string_view s) {
    return s.find_first_not_of(c) == std::string_view::npos;
  };
  if (!uniform(lead) || !uniform(from) || !uniform(to)) return std::string(line);
  long width = static_cast<long>(lead.size() + to.size()) - static_cast<long>(from.size());
  return std::string(static_cast<size_t>(std::max(0L, width)), c) +
         std::string(line.substr(lead.size()));
}

std::string ReplacementFor(const std::string& text, const std::vector<Line>& lines,
                           const LooseMatch& m, const EditBlock& block,
                           std::string_view search_indent) {
  std::string_view to = LeadingSpace(std::string_view(text).substr(lines[m.first].begin));
  std::string_view eol = lines[m.first].crlf ? "\r\n" : "\n";
  std::string out;
  for (std::string_view l : LinesOf(block.replace)) {
    out += Reindent(l, search_indent, to);
    out += eol;
  }
  if (!lines[m.last].newline && !out.empty()) out.resize(out.size() - eol.size());
  return out;
}

// Applies one block to `text`; returns an error, or nullopt when it applied.
std::optional<std::string> ApplyOne(std::string& text, const EditBlock& block, int number,
                                    std::string_view target) {
  std::vector<std::string_view> wanted;
  std::string_view search_indent;
  for (std::string_view l : LinesOf(block.search)) {
    if (IsBlank(l)) continue;
    if (wanted.empty()) search_indent = LeadingSpace(l);
    wanted.push_back(Trim(l));
  }
  if (wanted.empty()) return fmt::format("SEARCH block {} has no lines to look for", number);
  auto ambiguous = [&](size_t n) {
    return fmt::format(
        "SEARCH block {} matches {} places in {}; include more lines around it to make it unique",
        number, n, target);
  };
  std::vector<size_t> exact = ExactMatches(text, block.search);
  if (exact.size() == 1) {
    text.replace(exact[0], block.search.size(), block.replace);
    return std::nullopt;
  }
  if (exact.size() > 1) return ambiguous(exact.size());
  std::vector<Line> lines = SplitLines(text);
  std::vector<LooseMatch> loose = LooseMatches(text, lines, wanted);
  if (loose.empty())
    return fmt::format("SEARCH block {} matches nothing in {}: \"{}\"", number, target,
                       Quote(block.search));
  if (loose.size() > 1) return ambiguous(loose.size());
  const LooseMatch& m = loose[0];
  std::string replacement = ReplacementFor(text, lines, m, block, search_indent);
  text.replace(lines[m.first].begin, lines[m.last].next - lines[m.first].begin, replacement);
  return std::nullopt;
}

}  // namespace

ParsedEdits ParseEditBlocks(std::string_view text) {
  enum class State { kOutside, kSearch, kReplace } state = State::kOutside;
  ParsedEdits out;
  EditBlock block;
  auto number = [&] { return out.blocks.size() + 1; };
  for (std::string_view line : LinesOf(text)) {
    Marker m = MarkerOf(line);
    if (state == State::kOutside) {
      if (m == Marker::kSearch) state = State::kSearch;
      continue;  // prose, fences, stray markers
    }
    if (state == State::kSearch) {
      if (m == Marker::kDivider) {
        state = State::kReplace;
      } else if (m != Marker::kNone) {
        out.error = fmt::format("block {} has no ======= line", number());
        return out;
      } else {
        block.search += std::string(line) + "\n";
      }
      continue;
    }
    if (m == Marker::kReplace) {
      out.blocks.push_back(std::move(block));
      block = {};
      state = State::kOutside;
    } else if (m == Marker::kSearch) {
      out.error = fmt::format("block {} has no >>>>>>> REPLACE line", number());
      return out;
    } else {
      block.replace += std::string(line) + "\n";  // a second ======= is text
    }
  }
  if (state != State::kOutside)
    out.error = fmt::format("block {} is not closed (the reply was cut off?)", number());
  return out;
}

EditResult ApplyEdits(const std::string& original, const std::vector<EditBlock>& blocks,
                      std::string_view target) {
  EditResult result{original, "", 0};
  for (const EditBlock& block : blocks) {
    if (auto error = ApplyOne(result.text, block, result.applied + 1, target)) {
      result.error = std::move(*error);
      return result;
    }
    ++result.applied;
  }
  return result;
}

}  // namespace kf
