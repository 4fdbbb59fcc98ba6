#pragma once
// Compiling as values: what to compile (source, entry points, -D defines) and what came out (the
// binary, the symbols to look up, an intermediate listing the classifier reads, the log). A
// builder process and an executor exchange these through their JSON codecs.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kf {

// A compiled module as bytes plus the symbol to look up for each entry point of its request, in
// the request's order (CUDA lowers C++ names). One module holds every entry point of a kernel.
struct Artifact {
  std::vector<std::byte> binary;
  std::vector<std::string> symbols;
  std::string listing;  // an intermediate text the classifier reads (PTX for CUDA), or ""
};

struct CompileRequest {
  std::string source;
  std::vector<std::string> entries;  // one or more, each looked up in the compiled module
  std::vector<std::pair<std::string, std::string>> defines;
};

struct CompileResult {
  bool ok = false;
  Artifact artifact;
  std::string log;
  bool cache_hit = false;  // the artifact came from the compile cache
};

}  // namespace kf
