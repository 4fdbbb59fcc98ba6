#include "prompt/meta.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kf {

const Component* WeakestComponent(const PromptLibrary& library, int min_uses) {
  const Component* weakest = nullptr;
  for (const Component& c : library.components()) {
    if (c.stats.uses < min_uses) continue;
    if (!weakest || c.stats.MeanCredit() < weakest->stats.MeanCredit()) weakest = &c;
  }
  return weakest;
}

ChatPrompt MetaPrompt(const Component& weakest, const PromptLibrary& library,
                      const std::vector<std::string>& recent_failures) {
  auto figures = [](const Component& c) {
    return fmt::format("used {} times, mean credit {:.2f} of 1, improved the archive {} times",
                       c.stats.uses, c.stats.MeanCredit(), c.stats.improvements);
  };
  std::vector<const Component*> strong;
  for (const Component& c : library.components())
    if (c.id != weakest.id && c.stats.uses > 0) strong.push_back(&c);
  std::sort(strong.begin(), strong.end(), [](const Component* a, const Component* b) {
    return a->stats.MeanCredit() > b->stats.MeanCredit();
  });
  if (strong.size() > 2) strong.resize(2);

  ChatPrompt p;
  p.system =
      "You improve the guidance given to a model that writes GPU kernels. Each piece of "
      "guidance is scored by what the kernels written with it achieved.";
  p.user = fmt::format("This piece of guidance ({}, version {}) does worst: {}.\n```\n{}\n```\n",
                       weakest.id, weakest.version, figures(weakest), weakest.text);
  for (const Component* c : strong)
    p.user += fmt::format("\nFor contrast, {} does best: {}.\n```\n{}\n```\n", c->id, figures(*c),
                          c->text);
  if (!recent_failures.empty()) {
    p.user += "\nRecent failures of kernels written with it:\n";
    for (const std::string& f : recent_failures) p.user += "- " + CutMiddle(f, 300) + "\n";
  }
  p.user +=
      "\nRewrite the weak guidance so that it leads to correct, faster kernels: concrete, short, "
      "for CUDA and OpenCL alike. Answer with SEARCH/REPLACE blocks on its text only:\n"
      "<<<<<<< SEARCH\n(lines of the guidance, copied exactly)\n=======\n(their "
      "replacement)\n>>>>>>> REPLACE\n";
  return p;
}

EditResult ApplyMetaReply(const Component& component, const std::string& reply) {
  ParsedEdits edits = ParseEditBlocks(reply);
  EditResult r;
  if (!edits.error.empty()) {
    r.error = edits.error;
    return r;
  }
  if (edits.blocks.empty()) {
    r.error = "no SEARCH/REPLACE block in the reply";
    return r;
  }
  r = ApplyEdits(component.text, edits.blocks);
  if (!r.error.empty()) return r;
  if (r.text.find_first_not_of(" \t\r\n") == std::string::npos) {
    r.error = "the rewrite leaves the guidance empty";
  } else if (r.text == component.text) {
    r.error = "the rewrite changes nothing";
  }
  return r;
}

}  // namespace kf
