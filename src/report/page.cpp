#include "report/page.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace kf {

// Defined in the file cmake/embed_assets.cmake generates from src/report/assets.
extern const char* const kPageHtml;
extern const char* const kAppCss;
extern const char* const kAppJs;

namespace {

std::string ScriptSafeJson(const nlohmann::json& data) {
  std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string PageHtml(const nlohmann::json& data) {
  const std::string_view page = kPageHtml;
  // Each marker is replaced where it stands in the page, never inside what replaced another.
  const std::vector<std::pair<std::string_view, std::string>> parts = {
      {"/*KF_STYLE*/", kAppCss}, {"/*KF_SCRIPT*/", kAppJs}, {"/*KF_DATA*/", ScriptSafeJson(data)}};
  std::vector<std::pair<size_t, const std::pair<std::string_view, std::string>*>> at;
  for (const auto& part : parts) {
    size_t pos = page.find(part.first);
    if (pos == std::string_view::npos)
      throw std::logic_error("the report page lacks its marker " + std::string(part.first));
    at.emplace_back(pos, &part);
  }
  std::sort(at.begin(), at.end());
  std::string out;
  size_t from = 0;
  for (const auto& [pos, part] : at) {
    out.append(page.substr(from, pos - from));
    out += part->second;
    from = pos + part->first.size();
  }
  out.append(page.substr(from));
  return out;
}

}  // namespace kf
