#pragma once
// SEARCH/REPLACE edits, the way models write changes to a kernel (and the meta step to a prompt
// component), as blocks anywhere in a reply, fenced or not:
//
//   <<<<<<< SEARCH
//   old lines
//   =======
//   new lines
//   >>>>>>> REPLACE
//
// Parsing and applying report what went wrong as text a model can act on; nothing throws.

#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct EditBlock {
  std::string search, replace;  // whole lines, each ending in '\n'
};

struct ParsedEdits {
  std::vector<EditBlock> blocks;  // those read before any error
  std::string error;  // "" or e.g. "block 2 has no ======= line", "block 1 is not closed (...)"
};

// Markers may have 5 to 9 '<', '=' or '>', and spaces around them; '\r' is dropped from line ends.
ParsedEdits ParseEditBlocks(std::string_view text);

struct EditResult {
  std::string text;   // the original with the first `applied` blocks applied
  std::string error;  // "" when every block applied
  int applied = 0;
};

// Applies the blocks in order, each to the text the previous ones left. A block's SEARCH must
// match exactly one place: exactly (whole lines) first, else line by line with leading and
// trailing whitespace ignored and blank lines skipped on both sides. On the second path the
// replacement is re-indented by the difference between the first matched line's indentation and
// the SEARCH's, and takes the original's line endings. Errors name the block (from 1) and quote
// its first non-blank line; `target` says what was searched ("the parent").
EditResult ApplyEdits(const std::string& original, const std::vector<EditBlock>& blocks,
                      std::string_view target = "the text");

}  // namespace kf
