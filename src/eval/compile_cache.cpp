#include "eval/compile_cache.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kf {

namespace fs = std::filesystem;

namespace {
constexpr const char* kFormat = "KFART2";  // magic, symbols, listing size, listing, binary
// Part of every key: changed when the same device and request come to compile to something else
// (2: CUDA devices of compute capability 9.0 and 10.0 build for sm_90a and sm_100a, no longer for
// sm_90 and sm_100), so no artifact of the old target is found under a new key.
constexpr int kKeyVersion = 2;
}  // namespace

std::string DefaultCacheDir() {
  if (const char* d = std::getenv("KF_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kfoundry";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kfoundry";
  return "/tmp/kfoundry-cache";
}

CompileCache::CompileCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::create_directories(dir_ + "/compile", ec);
  if (ec) dir_.clear();  // an unwritable cache is no cache, not an error
}

std::string CompileCache::Key(const DeviceInfo& d, const CompileRequest& r) const {
  std::string material =
      fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n", kFormat, kKeyVersion, d.backend, d.name,
                  d.arch, d.driver_version, d.compiler_version, fmt::join(r.entries, ","));
  for (const auto& [k, v] : r.defines) material += fmt::format("-D{}={}\n", k, v);
  material += r.source;
  XXH128_hash_t h = XXH3_128bits(material.data(), material.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

std::string CompileCache::PathOf(const std::string& key) const {
  return dir_ + "/compile/" + key + ".bin";
}

std::optional<Artifact> CompileCache::Get(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  std::ifstream in(PathOf(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string magic, symbol, listing_size;
  if (!std::getline(in, magic) || magic != kFormat || !std::getline(in, symbol) ||
      !std::getline(in, listing_size)) {
    return std::nullopt;
  }
  char* end = nullptr;
  size_t n = std::strtoull(listing_size.c_str(), &end, 10);
  if (!end || *end != '\0' || n > (size_t{1} << 30)) return std::nullopt;
  std::string listing(n, '\0');
  if (n && !in.read(listing.data(), static_cast<std::streamsize>(n))) return std::nullopt;
  std::ostringstream rest;
  rest << in.rdbuf();
  std::string bytes = rest.str();
  if (bytes.empty()) return std::nullopt;
  Artifact a;
  // The symbols, one per entry point, separated by spaces (no symbol holds one).
  std::istringstream words(symbol);
  for (std::string word; words >> word;) a.symbols.push_back(word);
  a.listing = std::move(listing);
  a.binary.resize(bytes.size());
  std::memcpy(a.binary.data(), bytes.data(), bytes.size());
  return a;
}

void CompileCache::Put(const std::string& key, const Artifact& artifact) const {
  if (dir_.empty()) return;
  static std::atomic<unsigned> counter{0};
  std::string tmp = fmt::format("{}.tmp.{}.{}", PathOf(key), getpid(), counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out << kFormat << '\n'
        << fmt::format("{}", fmt::join(artifact.symbols, " ")) << '\n'
        << artifact.listing.size() << '\n'
        << artifact.listing;
    out.write(reinterpret_cast<const char*>(artifact.binary.data()),
              static_cast<std::streamsize>(artifact.binary.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, PathOf(key), ec);  // atomic on POSIX
  if (ec) fs::remove(tmp, ec);
}

namespace {

template <typename CompileFn>
CompileResult Through(const CompileCache& cache, const DeviceInfo& target,
                      const CompileRequest& request, CompileFn&& compile) {
  std::string key = cache.Key(target, request);
  if (auto artifact = cache.Get(key)) {
    CompileResult r;
    r.ok = true;
    r.cache_hit = true;
    r.artifact = std::move(*artifact);
    return r;
  }
  CompileResult r = compile(request);
  if (r.ok) cache.Put(key, r.artifact);
  return r;
}

}  // namespace

CompileResult CompileCached(Device& device, const CompileCache& cache,
                            const CompileRequest& request) {
  return Through(cache, device.info(), request,
                 [&](const CompileRequest& r) { return device.Compile(r); });
}

CompileResult CompileCached(Compiler& compiler, const DeviceInfo& target, const CompileCache& cache,
                            const CompileRequest& request) {
  return Through(cache, target, request,
                 [&](const CompileRequest& r) { return compiler.Compile(r); });
}

}  // namespace kf
