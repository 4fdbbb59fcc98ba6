#pragma once
// The archive as a small text heat map for the terminal: one panel per level of the third
// behaviour dimension (two panels a row), rows the first dimension's levels, columns the
// second's, each cell its speedup; ANSI colours when asked.

#include <map>
#include <string>
#include <vector>

#include "search/classifier.hpp"

namespace kf {

std::string TextHeatMap(const std::vector<Dimension>& dimensions,
                        const std::map<std::vector<int>, double>& speedups, bool colour);

}  // namespace kf
