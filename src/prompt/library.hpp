#pragma once
// The prompt library: the components a prompt is assembled from (philosophy, strategies, pitfalls,
// analysis guidance), loaded from prompts/*.toml, with the statistics that credit assignment keeps
// for each and the versions that the meta step makes of them. Only the current version of each
// component is held; older versions live in the store.

#include <string>
#include <vector>

namespace kf {

struct ComponentStats {
  int uses = 0;          // proposals whose prompt included it and that were graded
  int improvements = 0;  // of those, how many improved their archive cell or the best (grade >= 4)
  double credit = 0;     // sum of graded credit in [0,1] (grade / 5)
  double gain = 0;  // sum of relative gains (new speedup / old cell speedup - 1) of improvements

  double MeanCredit() const { return uses > 0 ? credit / uses : 0; }
  double ImprovementRate() const { return uses > 0 ? static_cast<double>(improvements) / uses : 0; }
};

struct Component {
  std::string id;                 // "memory.vectorise_loads": unique
  std::string kind;               // "philosophy" | "strategy" | "pitfall" | "analysis"
  std::string category;           // strategies: "memory" | "compute" | "parallelism"; else ""
  std::vector<std::string> aims;  // cells it aims at, as "dimension=level" ("memory=vectorised")
  std::string text;
  int version = 1, parent_version = 0;
  std::string made_by = "library";  // "library" | "meta"
  ComponentStats stats;
};

class PromptLibrary {
 public:
  // Every *.toml in `dir`, in order of file name; within a file, in order of appearance. Throws
  // InputError naming file, line and field for a bad or unknown field or a duplicate id, and for a
  // folder that does not exist.
  static PromptLibrary Load(const std::string& dir);

  // The current version of each component. Pointers into it (Find, OfKind) stay valid for the
  // library's lifetime: new versions replace their component in place.
  const std::vector<Component>& components() const { return components_; }
  const Component* Find(const std::string& id) const;
  std::vector<const Component*> OfKind(const std::string& kind) const;

  // A new version of a component (the meta step): version = old + 1, parent_version = old,
  // made_by = "meta", statistics reset. Throws std::out_of_range for an unknown id.
  const Component& AddVersion(const std::string& id, std::string text);
  // Puts a stored version back (resume): it replaces the current component of that id when its
  // version is >= the current one. Returns whether it did; an id the library lacks is ignored.
  bool Replace(Component c);
  // One graded use: uses + 1, credit += grade / 5, improvements + 1 when grade >= 4, gain added.
  // An unknown id is ignored.
  void Credit(const std::string& id, int grade, double gain);

 private:
  Component* Mutable(const std::string& id);

  std::vector<Component> components_;
};

// Where the shipped prompts are: $KF_PROMPTS_DIR, else <binary>/../share/kfoundry/prompts when it
// exists, else the source tree's prompts/.
std::string DefaultPromptsDir();

// The kinds and strategy categories a component may have.
bool IsComponentKind(const std::string& kind);
bool IsStrategyCategory(const std::string& category);

}  // namespace kf
