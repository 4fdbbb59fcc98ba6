#pragma once
// A kernel: source text plus the annotations that make one file a complete candidate: its entry
// points with their launch rules, its scratch buffers and tunable parameters. Annotations live in
// comments:
//
//   // @kernel rope_baseline                 entry point; a file may hold several, launched in
//   // @grid ceil_div(B * S, BLOCK)           file order, each with its own @grid/@block/@shared:
//   // @block BLOCK                           groups per dimension, work-items per group (1 to 3)
//   // @shared STAGES * TILE * 2              CUDA only: dynamic shared memory per block, bytes
//   // @scratch partial f32 ceil_div(N, BLOCK)   a scratch buffer (elements), passed after the
//   //                                        task's arguments to every launch
//   // @param BLOCK in [64, 128, 256] default 128
//   // @param UNROLL in range(1, 9)           integers 1..8; the default is the first value
//   // @constraint BLOCK * VEC <= max_work_group_size
//
// Launch and scratch expressions see the task's sizes and the parameters; constraints also see
// device properties. See docs/task-format.md.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/compile.hpp"
#include "core/dtype.hpp"
#include "core/expr.hpp"

namespace kf {

enum class Language { kCuda, kOpenCL };

std::string_view LanguageName(Language lang);

struct ParamSpec {
  std::string name;
  std::vector<std::string> values;  // as written; integers or identifiers
  std::string default_value;
  int line = 0;
};

// One point of a parameter space, name → value as written (`{BLOCK: 128, VEC: 4}`).
using Config = std::map<std::string, std::string>;

std::string ConfigToString(const Config& config);

// One launch of a kernel file: an entry point (a `@kernel` block) and its launch rule.
struct LaunchRule {
  std::string entry;
  std::vector<Expr> grid;   // 1..3
  std::vector<Expr> block;  // 1..3
  // CUDA only: bytes of dynamic shared memory per block (`extern __shared__`), read like the launch
  // rule; none when absent.
  std::optional<Expr> shared;
  std::vector<std::string> arg_names;  // parameter names of the entry point, in order
  // Lines (1-based; 0 = none) of the annotations and of the entry point in the source, for
  // messages: @kernel, @grid, @block, @shared, the entry point's definition, and each of its
  // parameters.
  int entry_line = 0, grid_line = 0, block_line = 0, shared_line = 0, definition_line = 0;
  std::vector<int> arg_lines;
};

// A buffer the candidate's launches share (`// @scratch NAME TYPE COUNT`): `count` elements of
// `dtype`, passed after the task's arguments in declaration order, poisoned before the first launch
// of every run and guarded like an output.
struct ScratchSpec {
  std::string name;
  DType dtype = DType::kF32;
  Expr count;
  int line = 0;
};

struct Kernel {
  std::string path;  // where it was read from ("" for in-memory sources)
  std::string source;
  Language language = Language::kOpenCL;
  std::vector<LaunchRule> launches;  // at least one, launched in this order
  std::vector<ScratchSpec> scratch;
  std::vector<ParamSpec> params;  // shared by every launch
  std::vector<Expr> constraints;
  std::vector<int> constraint_lines;  // of each @constraint

  // The entry points, comma-separated, in launch order ("scale"; "scan_blocks,scan_add").
  std::string EntryNames() const;

  // The default configuration overridden by `overrides`; throws InputError for an unknown name or a
  // value outside the declared set.
  Config ResolveConfig(const Config& overrides) const;
};

// What to compile for `config`: the source, every entry point, and as -D defines the task's own
// (a variant's macros, Task::defines) followed by the configuration.
CompileRequest CompileRequestFor(const Kernel& kernel, const Config& config,
                                 const Config& task_defines);

// A kernel file's language by its extension: .cu CUDA, .cl OpenCL; none for any other.
std::optional<Language> LanguageOfPath(const std::string& path);

// Parses annotations from `source`. `path` is used for messages and, through its extension
// (.cu, .cl), for the language. Throws InputError naming the line and annotation.
Kernel ParseKernel(const std::string& path, std::string source);
// Where the entry point's parameter list lies in `source`: [begin, end), inside the parentheses
// of its definition (the declaration that carries __global__ or __kernel).
std::optional<std::pair<size_t, size_t>> EntryParamList(const std::string& source,
                                                        const std::string& entry);
Kernel LoadKernelFile(const std::string& path);

// Checks that every entry point is defined and takes `args` followed by the scratch buffers in
// order (a name may carry a suffix after '_': cos_t for cos); `owner` names who passes `args`
// ("task 'rope'"). Throws InputError at the @kernel line (no such definition) or the entry point's
// line (wrong arguments).
void CheckEntryArgs(const Kernel& kernel, const std::vector<std::string>& args,
                    const std::string& owner);
// Checks that every name the launch rules (@grid, @block, @shared) and scratch sizes read is one of
// `sizes` or the kernel's @param names, and every name a constraint reads is one of those or of
// `constraint_extras` (device properties). Throws InputError at the annotation's line, naming the
// names known.
void CheckKernelNames(const Kernel& kernel, const std::vector<std::string>& sizes,
                      const std::vector<std::string>& constraint_extras);

// The source with the @param lines of `params` rewritten (matched by name to the kernel's own, in
// place): `// @param NAME in [v1, v2, ...] default V`. Other lines are kept as they are.
std::string WithParams(const Kernel& kernel, const std::vector<ParamSpec>& params);
// The source with every parameter's default set to its value in `config` (others untouched): a
// kernel file that evaluates as this configuration with no --set.
std::string WithDefaults(const Kernel& kernel, const Config& config);

// The numeric value of a config entry, for launch expressions (non-numeric values count as 0).
void BindConfig(const Config& config, Env& env);

}  // namespace kf
