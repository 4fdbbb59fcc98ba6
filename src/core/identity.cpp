#include "core/identity.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include "core/codec.hpp"

namespace kf {

namespace {

std::string Hash(char prefix, const std::string& material) {
  XXH128_hash_t h = XXH3_128bits(material.data(), material.size());
  return fmt::format("{}{:016x}{:016x}", prefix, h.high64, h.low64);
}

}  // namespace

std::string KernelId(const Kernel& kernel) {
  return Hash(
      'k', std::string(LanguageName(kernel.language)) + "\n" + kernel.entry + "\n" + kernel.source);
}

std::string CandidateId(const std::string& kernel_id, const Config& config) {
  return Hash('c', kernel_id + "\n" + ConfigToJson(config).dump());
}

std::string EvaluationKey(const std::string& candidate_id, const std::string& device,
                          const nlohmann::json& settings) {
  return Hash('e', candidate_id + "\n" + device + "\n" + settings.dump());
}

}  // namespace kf
