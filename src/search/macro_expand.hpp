#pragma once
// Enough of the C preprocessor to read a kernel the way its compiler will: object-like and
// function-like #define macros (with # and ##, arguments expanded before substitution unless
// pasted, rescanning, no recursion) and the configuration's -D values, so that a vector load
// written through a macro (`CAT(vload_half, VEC)` with VEC=8) is classified like the literal
// `vload_half8`. Conditionals (#if) are not evaluated: both branches stay, as in the source.

#include <string>

#include "core/kernel.hpp"

namespace kf {

// `code` (comments already stripped) with its #define lines removed and its macros, and the
// configuration's values as object-like macros, expanded.
std::string ExpandMacros(const std::string& code, const Config& defines);

}  // namespace kf
