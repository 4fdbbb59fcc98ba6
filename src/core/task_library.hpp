#pragma once
// The bundled task library: finds tasks by name or folder. Searched in order: $KF_TASKS_DIR,
// <binary>/../share/kfoundry/tasks, and the source tree the binary was built from.

#include <string>
#include <utility>
#include <vector>

#include "core/task.hpp"

namespace kf {

std::vector<std::string> TaskSearchDirs();
// A folder holding task.toml, or the name of a bundled task, either followed by ".VARIANT" for
// one of its variants ("gemm_f16.bf16"). Throws InputError when neither.
Task FindTask(const std::string& name_or_path);
std::vector<Task> BundledTasks();  // as written, without variants (Task::variants names them)

// "gemm_f16.bf16" → {"gemm_f16", "bf16"}; a folder too ("tasks/gemm_f16.bf16"): the variant is
// what follows the first '.' of the last path component. {text, ""} when there is none.
std::pair<std::string, std::string> SplitTaskVariant(const std::string& text);
// The inverse: `base` (a task's name, folder or content id) followed by ".VARIANT", or `base`
// alone when `variant` is empty.
std::string JoinTaskVariant(const std::string& base, const std::string& variant);

// KERNEL as the command line takes it: a file, or the name of one of the task's own kernels in
// `lang` ("baseline", "reference", or a template's file stem such as "rope_vec8"). Throws
// InputError listing the names there are.
std::string ResolveTaskKernel(const Task& task, const std::string& kernel, Language lang);

}  // namespace kf
