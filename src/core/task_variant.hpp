#pragma once
// Task variants (issue 33): `[variants.NAME]` in task.toml is a setting of the task's element types
// or precision, named `TASK.NAME`. Applying one rewrites the task file's table before it is read
// (its precision, argument types, tolerance fields, template lists, description), so every check
// of task.toml applies to the variant as written and its errors name the variant's own lines; its
// `defines` are macros every kernel of the variant is compiled with. Internal to the task loader
// (core/task.cpp); the TASK.VARIANT names are core/task_library.hpp's.

#include <toml++/toml.h>

#include <string>
#include <utility>
#include <vector>

#include "core/kernel.hpp"
#include "core/task_reader.hpp"

namespace kf {

namespace task_reader {

// The variants `root` declares, in file order, each checked as far as it can be without applying
// it (its keys, the arguments `types` names and their types, its defines); FILE:LINE: FIELD errors.
std::vector<std::string> CheckVariants(const TaskReader& r, const toml::table& root);

// Rewrites `root` as variant `name` (leaving no [variants] table) and returns its defines. Fails
// naming the variants there are when there is no such variant, or when `name` asks for a variant
// of a variant.
Config ApplyVariant(const TaskReader& r, toml::table& root, const std::string& name);

}  // namespace task_reader
}  // namespace kf
