#include "propose/builtin/builtin_proposer.hpp"

#include <algorithm>
#include <filesystem>

#include "core/input_error.hpp"
#include "propose/builtin/mutations.hpp"
#include "store/store.hpp"

namespace kf {

std::optional<Proposal> BuiltinProposer::Propose(const ProposalContext& context,
                                                 std::mt19937_64& rng) {
  auto templates = context.task.templates.find(context.language);
  while (!templates_done_) {
    if (templates == context.task.templates.end() || next_template_ >= templates->second.size()) {
      templates_done_ = true;
      break;
    }
    const std::string& file = templates->second[next_template_++];
    Proposal p;
    p.kernel = LoadKernelFile(context.task.PathOf(file));
    p.origin = "template " + file;
    if (proposed_.insert(KernelId(p.kernel)).second) return p;
  }
  if (!context.parent) return std::nullopt;

  const Elite& parent = *context.parent;
  // Base the child on the parent's best configuration.
  Kernel base = parent.kernel;
  base.source = WithDefaults(parent.kernel, parent.config);
  struct Option {
    const Mutation* mutation;
    Kernel kernel;
  };
  std::vector<Option> options;
  for (const Mutation& m : Mutations()) {
    std::optional<std::string> source = m.apply(base, context.task);
    if (!source) continue;
    std::filesystem::path path(parent.kernel.path);
    std::string child_path =
        (path.parent_path() / (path.stem().string() + "+" + m.name + path.extension().string()))
            .string();
    try {
      Kernel child = ParseKernel(child_path, *source);
      if (proposed_.count(KernelId(child))) continue;
      options.push_back({&m, std::move(child)});
    } catch (const InputError&) {
      // The mutation broke the annotations: not a kernel we can even submit.
    }
  }
  if (options.empty()) return std::nullopt;

  std::vector<size_t> novel, inspired;
  if (context.archive) {
    for (size_t i = 0; i < options.size(); ++i) {
      const Kernel& k = options[i].kernel;
      Cell predicted = descriptors_.Classify(k.language, k.source, "");
      if (!context.archive->cells().count(predicted)) novel.push_back(i);
    }
  }
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string& name = options[i].mutation->name;
    bool parent_has = std::count(parent.mutations.begin(), parent.mutations.end(), name) > 0;
    for (const Elite* e : context.inspirations) {
      if (!parent_has && std::count(e->mutations.begin(), e->mutations.end(), name) > 0) {
        inspired.push_back(i);
        break;
      }
    }
  }
  size_t pick;
  if (!novel.empty() && std::bernoulli_distribution(0.5)(rng)) {
    pick = novel[std::uniform_int_distribution<size_t>(0, novel.size() - 1)(rng)];
  } else if (!inspired.empty() && std::bernoulli_distribution(0.5)(rng)) {
    pick = inspired[std::uniform_int_distribution<size_t>(0, inspired.size() - 1)(rng)];
  } else {
    pick = std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng);
  }
  Option& chosen = options[pick];
  Proposal p;
  p.kernel = std::move(chosen.kernel);
  p.origin = chosen.mutation->name + " of " +
             std::filesystem::path(parent.kernel.path).filename().string();
  p.parent_kernel_id = parent.kernel_id;
  p.parent_cell = parent.cell;
  p.mutations = parent.mutations;
  p.mutations.push_back(chosen.mutation->name);
  proposed_.insert(KernelId(p.kernel));
  return p;
}

}  // namespace kf
