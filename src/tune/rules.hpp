#pragma once
// The hardware rule engine. Rules are data (rules/*.toml): a condition on the task's op class, the
// device (vendor, architecture, class, an expression over its properties) and the kernel (source
// features until the behaviour classifier lands), and actions: restrict a parameter's values,
// forbid combinations (an expression), order values to try first, add a prompt hint. Rules are
// applied to a space before any evaluation is spent.
//
//   [[rule]]
//   name = "hopper-warp-multiple"
//   when = { vendor = "NVIDIA", arch = "sm_9", op_class = ["rope"], device = "sub_group_width ==
//   32",
//            requires = ["BLOCK"], lacks = ["TILE"] }       (parameters the space must / must not
//            have)
//   restrict = { BLOCK = [128, 256, 512] }
//   forbid = "BLOCK % sub_group_width != 0"
//   order = { BLOCK = [256, 128] }
//   hint = "16-byte loads per thread, coalesced across the warp"

#include <map>
#include <string>
#include <vector>

#include "core/expr.hpp"
#include "tune/objective.hpp"
#include "tune/space.hpp"

namespace kf {

struct RuleContext {
  std::string op_class;
  std::string vendor, arch, device_class, device_name;
  Env device;          // max_work_group_size, local_mem_bytes, sub_group_width, compute_units, ...
  std::string source;  // the kernel's source ("" for a recorded space)
  Config defaults;     // the template's default configuration (empty when unknown)
};

struct Rule {
  std::string name, file;
  int line = 0;
  std::vector<std::string> op_classes;       // any of; empty = every op class
  std::string vendor, arch, device_class;    // substring, prefix, exact; empty = any
  std::vector<std::string> source_contains;  // all of
  std::vector<std::string> requires_params;  // the space must have all of these parameters
  std::vector<std::string> lacks_params;     // ...and none of these
  std::optional<Expr> device_condition;
  std::map<std::string, std::vector<std::string>> restrict_values, order_values;
  std::vector<Expr> forbid;
  std::string hint;

  bool Applies(const RuleContext& context) const;
};

// Every rules/*.toml in `dir` (sorted by file name). Throws InputError naming file, line, field.
std::vector<Rule> LoadRules(const std::string& dir);
std::vector<Rule> LoadRuleFile(const std::string& path);
// $KF_RULES_DIR, <binary>/../share/kfoundry/rules, the source tree's rules/.
std::string DefaultRulesDir();

struct RuledSpace {
  SearchSpace space;
  // Up to 4 valid points that take the ordered values, each otherwise as close to the template's
  // default as the space allows (spread over the space when there is no default).
  std::vector<Point> try_first;
  std::vector<std::string> applied, hints;
};

RuledSpace ApplyRules(const std::vector<Rule>& rules, const RuleContext& context,
                      const SearchSpace& space);

// What a tuning run measures before its strategy chooses: the template's default configuration
// (its author's best guess; skipped when the space, ruled or not, excludes it), then the rules'
// tried-first points, at most a quarter of the budget (at least one) besides the default.
std::vector<Point> StartingPoints(const SearchSpace& space, const Config& defaults,
                                  const std::vector<Point>& try_first, int budget);

// The context of a recorded space: what our own recordings store under "kfoundry"; otherwise
// from what the file says (or, where it names no device, the file name): the device name decides
// the vendor and the sub-group width (32 for NVIDIA, 64 for AMD), the kernel name stands for the
// op class.
RuleContext RecordedSpaceContext(const ReplayObjective& replay, const std::string& path);
nlohmann::json RuleContextToJson(const RuleContext& context);

}  // namespace kf
