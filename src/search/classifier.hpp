#pragma once
// The behaviour classifier: places a kernel in the cells of the behaviour space (memory access ×
// algorithm structure × parallel coordination by default). The dimensions, their levels and the
// features that decide them are data (descriptors/*.toml). CUDA kernels are read from their
// compiled PTX (vector loads, ld/st.shared, cp.async, bar.sync, shfl, atom/red, mma/wgmma), with
// the source for what PTX cannot tell (loops, unroll pragmas); OpenCL kernels from the source,
// preprocessed with the configuration.

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "core/kernel.hpp"

namespace kf {

struct FeaturePattern {
  std::string text;  // a substring, unless `regex`
  bool is_regex = false;
  std::regex regex;
};

struct Feature {
  std::string name;
  std::vector<FeaturePattern> cuda_listing, cuda_source, opencl_source;
};

struct Dimension {
  std::string name;
  std::vector<std::string> levels;
  std::vector<std::vector<std::string>> level_features;  // per level: any of these features
};

class DescriptorSpace {
 public:
  // Throws InputError naming the file, line and field.
  static DescriptorSpace Load(const std::string& path);
  const std::vector<Dimension>& dimensions() const { return dimensions_; }

  // The features present in a kernel, and its cell (one level index per dimension).
  // OpenCL source is read after its macros and the configuration's -D values are expanded
  // (search/macro_expand.hpp), as its compiler reads it.
  std::vector<std::string> Features(Language lang, const std::string& source,
                                    const std::string& listing, const Config& config = {}) const;
  std::vector<int> Classify(Language lang, const std::string& source, const std::string& listing,
                            const Config& config = {}) const;
  // A cell in words: "memory: vectorised; algorithm: looped; coordination: independent".
  std::string Describe(const std::vector<int>& cell) const;
  int CellCount() const;

 private:
  std::vector<Dimension> dimensions_;
  std::map<std::string, Feature> features_;
};

// $KF_DESCRIPTORS, <binary>/../share/kfoundry/descriptors/default.toml, the source tree's.
std::string DefaultDescriptorFile();
// The source without // and /* */ comments (strings are kept).
std::string StripComments(const std::string& source);

}  // namespace kf
