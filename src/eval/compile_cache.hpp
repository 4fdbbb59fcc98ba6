#pragma once
// Content-addressed cache of compiled artifacts. The key hashes everything that decides the
// artifact: source, entry, defines, device, architecture, driver and compiler versions and a
// format version. Entries are written to a temporary file and renamed into place, so a crash
// never leaves half an entry. Directory: $KF_CACHE_DIR, else $XDG_CACHE_HOME/kfoundry, else
// ~/.cache/kfoundry.

#include <optional>
#include <string>

#include "backend/device.hpp"

namespace kf {

std::string DefaultCacheDir();

class CompileCache {
 public:
  explicit CompileCache(std::string dir);  // an empty dir disables the cache
  std::string Key(const DeviceInfo& device, const CompileRequest& request) const;
  std::optional<Artifact> Get(const std::string& key) const;
  void Put(const std::string& key, const Artifact& artifact) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string PathOf(const std::string& key) const;
  std::string dir_;
};

// Compiles through the cache (the result's cache_hit says whether the artifact came from it): on
// an opened device, or with an offline compiler for `target` (the same key either way, so a
// builder's artifact is found by the executor and the other way round).
CompileResult CompileCached(Device& device, const CompileCache& cache,
                            const CompileRequest& request);
CompileResult CompileCached(Compiler& compiler, const DeviceInfo& target, const CompileCache& cache,
                            const CompileRequest& request);

}  // namespace kf
