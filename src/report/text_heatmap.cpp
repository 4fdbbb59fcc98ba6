#include "report/text_heatmap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kf {

namespace {

constexpr int kCell = 7;  // characters per cell
constexpr int kPanelsPerRow = 2;

std::string Speedup(double s) {
  if (s >= 100) return fmt::format("{:.0f}x", s);
  if (s >= 10) return fmt::format("{:.1f}x", s);
  return fmt::format("{:.2f}x", s);
}

// A 256-colour background from red (slower than the baseline) through yellow to green (the best).
std::string Shade(double s, double best) {
  if (s < 1) return "\x1b[48;5;217m";
  static const int kGreens[] = {229, 193, 157, 120, 83, 46};
  double f = best > 1 ? std::log(s) / std::log(best) : 1;
  int i = std::clamp(static_cast<int>(std::lround(f * 5)), 0, 5);
  return fmt::format("\x1b[48;5;{}m", kGreens[i]);
}

std::string Level(const Dimension& d, int i) {
  return i >= 0 && i < static_cast<int>(d.levels.size()) ? d.levels[static_cast<size_t>(i)]
                                                         : fmt::format("{}", i);
}

}  // namespace

std::string TextHeatMap(const std::vector<Dimension>& dims,
                        const std::map<std::vector<int>, double>& speedups, bool colour) {
  if (dims.size() < 2) return "";
  const Dimension& rows = dims[0];
  const Dimension& cols = dims[1];
  // Panels: one per combination of the levels past the second dimension.
  std::vector<std::vector<int>> panels = {{}};
  for (size_t d = 2; d < dims.size(); ++d) {
    std::vector<std::vector<int>> next;
    for (const auto& p : panels)
      for (int l = 0; l < static_cast<int>(dims[d].levels.size()); ++l) {
        next.push_back(p);
        next.back().push_back(l);
      }
    panels = std::move(next);
  }
  double best = 1;
  for (const auto& [cell, s] : speedups) best = std::max(best, s);
  size_t label = 0;
  for (const std::string& l : rows.levels) label = std::max(label, l.size());
  label = std::min<size_t>(label, 14) + 2;

  std::string out = fmt::format("speedup per cell; rows: {}; columns: {}:", rows.name, cols.name);
  for (size_t c = 0; c < cols.levels.size(); ++c)
    out += fmt::format(" {}={}", cols.levels[c].substr(0, 1) + std::to_string(c), cols.levels[c]);
  out += "; · empty\n";
  // A panel's title: its levels of the dimensions past the second, whole.
  std::vector<std::string> titles;
  size_t width = cols.levels.size() * kCell;
  for (const auto& p : panels) {
    std::string name;
    for (size_t d = 0; d < p.size(); ++d)
      name += (d ? ", " : "") + dims[d + 2].name + " = " + Level(dims[d + 2], p[d]);
    width = std::max(width, name.size());
    titles.push_back(name);
  }
  const size_t gap = 3;
  for (size_t first = 0; first < panels.size(); first += kPanelsPerRow) {
    size_t last = std::min(panels.size(), first + kPanelsPerRow);
    std::string title(label, ' '), header(label, ' ');
    for (size_t p = first; p < last; ++p) {
      title += fmt::format("{:<{}}", titles[p], width + gap);
      std::string h;
      for (size_t c = 0; c < cols.levels.size(); ++c)
        h += fmt::format("{:<{}}", cols.levels[c].substr(0, 1) + std::to_string(c), kCell);
      header += fmt::format("{:<{}}", h, width + gap);
    }
    while (!title.empty() && title.back() == ' ') title.pop_back();
    while (!header.empty() && header.back() == ' ') header.pop_back();
    out += title + "\n" + header + "\n";
    for (int r = 0; r < static_cast<int>(rows.levels.size()); ++r) {
      std::string line = fmt::format("{:<{}}", Level(rows, r).substr(0, label - 2), label);
      for (size_t p = first; p < last; ++p) {
        std::string cells;
        for (int c = 0; c < static_cast<int>(cols.levels.size()); ++c) {
          std::vector<int> cell = {r, c};
          cell.insert(cell.end(), panels[p].begin(), panels[p].end());
          auto it = speedups.find(cell);
          if (it == speedups.end()) {
            cells += fmt::format("{:<{}}", "·", kCell);  // fmt pads by columns, not bytes
          } else {
            std::string text = fmt::format("{:<{}}", Speedup(it->second), kCell - 1);
            cells += colour ? Shade(it->second, best) + "\x1b[30m" + text + "\x1b[0m " : text + " ";
          }
        }
        // Pad to the panel's width by what shows, not by the colour codes' bytes.
        line += cells + std::string(width + gap - cols.levels.size() * kCell, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace kf
