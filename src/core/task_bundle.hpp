#pragma once
// A task folder as a value that travels: its files keyed by the folder's content id, so a worker
// fetches a task once (from the store) and unpacks it into a cache folder named by that id. What
// is unpacked is checked against the id, so a tampered or truncated bundle never becomes a task.

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace kf {

struct TaskBundle {
  std::string id;                            // TaskContentId of the folder
  std::string name;                          // the task's name (for messages)
  std::map<std::string, std::string> files;  // path relative to the folder ('/') → bytes
};

// The largest folder a bundle carries (all its files together).
constexpr size_t kMaxTaskBundleBytes = size_t{64} << 20;

// The folder's files as TaskContentId sees them (hidden files and folders left out). InputError
// naming the folder when it is over kMaxTaskBundleBytes in all or a file cannot be read.
TaskBundle PackTaskFolder(const std::string& dir, const std::string& name);

// Writes the bundle to CACHE_ROOT/ID/ and returns that folder: into a temporary sibling first
// (files flushed), then renamed, so a reader never sees half a folder; a complete one already
// there is reused. Processes unpacking the same bundle at once all end with the complete folder.
// InputError when a path is not a plain relative one (absolute, "..", a hidden part), when the
// written folder's TaskContentId is not the bundle's id, or when the cached folder's is not (it
// was edited in place: the message says to remove it).
std::string UnpackTaskBundle(const TaskBundle& bundle, const std::string& cache_root);

// Contents as base64. FromJson throws nlohmann::json::exception or std::invalid_argument (bad
// base64) on a malformed object.
nlohmann::json TaskBundleToJson(const TaskBundle& b);
TaskBundle TaskBundleFromJson(const nlohmann::json& j);

}  // namespace kf
