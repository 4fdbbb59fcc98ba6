#pragma once
// Compiling as values: what to compile (source, entry point, -D defines) and what came out (the
// binary, the symbol to look up, an intermediate listing the classifier reads, the log). A
// builder process and an executor exchange these through their JSON codecs.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kf {

// A compiled kernel as bytes plus the symbol to look up (CUDA lowers C++ names).
struct Artifact {
  std::vector<std::byte> binary;
  std::string symbol;
  std::string listing;  // an intermediate text the classifier reads (PTX for CUDA), or ""
};

struct CompileRequest {
  std::string source;
  std::string entry;
  std::vector<std::pair<std::string, std::string>> defines;
};

struct CompileResult {
  bool ok = false;
  Artifact artifact;
  std::string log;
  bool cache_hit = false;  // the artifact came from the compile cache
};

}  // namespace kf
