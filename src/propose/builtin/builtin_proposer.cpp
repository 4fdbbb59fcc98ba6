#include "propose/builtin/builtin_proposer.hpp"

#include <algorithm>
#include <filesystem>
#include <random>

#include "core/identity.hpp"
#include "core/input_error.hpp"
#include "propose/builtin/mutations.hpp"

namespace kf {

namespace {

constexpr std::string_view kTemplateOrigin = "template ";

}  // namespace

BuiltinProposer::BuiltinProposer(const Task& task, Language language, CellPredictor predict)
    : task_(task), predict_(std::move(predict)) {
  if (auto it = task.templates.find(language); it != task.templates.end()) templates_ = it->second;
}

int BuiltinProposer::UnparentedLeft() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int left = 0;
  for (const std::string& t : templates_) left += used_templates_.count(t) == 0;
  return left;
}

void BuiltinProposer::Observe(const ProposalRecord& record) {
  if (!record.proposal) return;
  const Proposal& proposal = *record.proposal;
  std::lock_guard<std::mutex> lock(mutex_);
  proposed_.insert(KernelId(proposal.kernel));
  if (proposal.origin.rfind(kTemplateOrigin, 0) == 0)
    used_templates_.insert(proposal.origin.substr(kTemplateOrigin.size()));
}

void BuiltinProposer::Credit(const ProposalRecord& record) {
  // Only mutations earn credit: a template is proposed once whatever it earns.
  if (!record.proposal || record.proposal->parent_kernel_id.empty() ||
      record.proposal->mutations.empty())
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  mutations_.Reward(record.proposal->mutations.back(),
                    GradeCredit(static_cast<int>(record.grade())));
}

ProposalOutcome BuiltinProposer::Propose(const ProposalRequest& request) {
  return request.parent ? Mutate(request) : NextTemplate();
}

ProposalOutcome BuiltinProposer::NextTemplate() {
  for (;;) {
    std::string file;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const std::string& t : templates_) {
        if (!used_templates_.count(t)) {
          file = t;
          break;
        }
      }
      if (file.empty()) return ProposalOutcome::NothingNew("every template was proposed");
      used_templates_.insert(file);
    }
    Proposal p;
    p.kernel = LoadKernelFile(task_.PathOf(file));  // a broken task file is the user's to fix
    p.origin = std::string(kTemplateOrigin) + file;
    std::lock_guard<std::mutex> lock(mutex_);
    if (proposed_.insert(KernelId(p.kernel)).second) return ProposalOutcome::Ok(std::move(p));
  }
}

ProposalOutcome BuiltinProposer::Mutate(const ProposalRequest& request) {
  const Elite& parent = *request.parent;
  std::mt19937_64 rng(request.seed);
  // Base the child on the parent's best configuration.
  Kernel base = parent.kernel;
  base.source = WithDefaults(parent.kernel, parent.config);
  struct Option {
    const Mutation* mutation;
    Kernel kernel;
    std::string id;
  };
  std::vector<Option> options;
  std::set<std::string> proposed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    proposed = proposed_;
  }
  for (const Mutation& m : Mutations()) {
    std::optional<std::string> source = m.apply(base, task_);
    if (!source) continue;
    std::filesystem::path path(parent.kernel.path);
    std::string child_path =
        (path.parent_path() / (path.stem().string() + "+" + m.name + path.extension().string()))
            .string();
    try {
      Kernel child = ParseKernel(child_path, *source);
      std::string id = KernelId(child);
      if (proposed.count(id)) continue;
      options.push_back({&m, std::move(child), std::move(id)});
    } catch (const InputError&) {
      // The mutation broke the annotations: not a kernel we can even submit.
    }
  }
  if (options.empty()) return ProposalOutcome::NothingNew("no mutation of the parent is new");

  std::vector<size_t> novel, inspired;
  if (predict_) {
    for (size_t i = 0; i < options.size(); ++i) {
      Cell predicted = predict_(options[i].kernel);
      if (std::find(request.filled_cells.begin(), request.filled_cells.end(), predicted) ==
          request.filled_cells.end())
        novel.push_back(i);
    }
  }
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string& name = options[i].mutation->name;
    bool parent_has = std::count(parent.mutations.begin(), parent.mutations.end(), name) > 0;
    for (const Elite& e : request.inspirations) {
      if (!parent_has && std::count(e.mutations.begin(), e.mutations.end(), name) > 0) {
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
    std::vector<std::string> names;
    for (const Option& o : options) names.push_back(o.mutation->name);
    std::string name;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      name = mutations_.Choose(names, 1, rng).front();
    }
    pick = static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  }
  Option& chosen = options[pick];
  {
    // Another request may have proposed the same child meanwhile.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!proposed_.insert(chosen.id).second)
      return ProposalOutcome::NothingNew("the chosen mutation was proposed meanwhile");
  }
  Proposal p;
  p.kernel = std::move(chosen.kernel);
  p.origin = chosen.mutation->name + " of " +
             std::filesystem::path(parent.kernel.path).filename().string();
  p.parent_kernel_id = parent.kernel_id;
  p.parent_cell = parent.cell;
  p.mutations = parent.mutations;
  p.mutations.push_back(chosen.mutation->name);
  return ProposalOutcome::Ok(std::move(p));
}

}  // namespace kf
