#include "torch/starting_kernels.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace kf {

using nlohmann::json;

namespace {

// Each op class the inspector names: the task's op_class (as the library's tasks and rules name
// it) and its templates: CUDA's best guess for an H100 at KernelBench's sizes first, OpenCL's for
// a CPU first.
struct OpClass {
  const char* op_class;
  std::vector<std::string> cuda, opencl;
};

const std::map<std::string, OpClass>& Classes() {
  static const std::map<std::string, OpClass> all = {
      {"elementwise",
       {"elementwise",
        {"elementwise_vec.cu", "elementwise_grid.cu"},
        {"elementwise_items.cl", "elementwise_vec.cl"}}},
      {"softmax",
       {"softmax",
        {"softmax_rows.cu", "softmax_warp.cu", "softmax_lines.cu"},
        {"softmax_items.cl", "softmax_rowvec.cl", "softmax_group.cl"}}},
      {"rmsnorm",
       {"rmsnorm",
        {"rmsnorm_lines.cu", "rmsnorm_rows.cu", "rmsnorm_warp.cu"},
        {"rmsnorm_items.cl", "rmsnorm_group.cl"}}},
      {"layernorm",
       {"layernorm",
        {"layernorm_split.cu", "layernorm_rows.cu"},
        {"layernorm_items.cl", "layernorm_group.cl"}}},
      {"reduction",
       {"reduction",
        {"reduce_lines.cu", "reduce_rows.cu", "reduce_tile.cu"},
        {"reduction_items.cl", "reduction_group.cl"}}},
      {"scan", {"scan", {"scan_rows.cu", "scan_lines.cu"}, {"scan_items.cl", "scan_group.cl"}}},
      {"matmul",
       {"gemm",
        {"matmul_regblock.cu", "matmul_tiled.cu"},
        {"matmul_items.cl", "matmul_rowvec.cl", "matmul_tiled.cl"}}},
  };
  return all;
}

const OpClass* Find(const json& op) {
  if (!op.is_object() || !op.contains("class") || !op["class"].is_string()) return nullptr;
  auto it = Classes().find(op["class"].get<std::string>());
  return it == Classes().end() ? nullptr : &it->second;
}

// The element type in `lang` (CUDA's __half needs cuda_fp16.h, which every .cu template includes).
// bf16 is never asked for (the inspector offers an op class on f32 data only); its bits would sit
// in a ushort, OpenCL having no bfloat16 type.
std::string CType(DType t, Language lang) {
  bool cuda = lang == Language::kCuda;
  switch (t) {
    case DType::kF16: return cuda ? "__half" : "half";
    case DType::kF32: return "float";
    case DType::kF64: return "double";
    case DType::kI32: return "int";
    case DType::kI64: return cuda ? "long long" : "long";
    case DType::kU8: return cuda ? "unsigned char" : "uchar";
    case DType::kBF16: return "ushort";
  }
  return "float";
}

// The entry point's parameter list: `__global const float* x, ...` in OpenCL,
// `const float* __restrict__ x, ...` in CUDA.
std::string Parameters(const std::vector<SignatureArg>& args, Language lang) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    const SignatureArg& a = args[i];
    std::string type = CType(a.dtype, lang), constness = a.output ? "" : "const ";
    out += i ? ", " : "";
    if (!a.tensor)
      out += type + " " + a.name;
    else if (lang == Language::kCuda)
      out += fmt::format("{}{}* __restrict__ {}", constness, type, a.name);
    else
      out += fmt::format("__global {}{}* {}", constness, type, a.name);
  }
  return out;
}

// A size expression, parenthesised unless one word: in an annotation as it is, in the kernel's
// code computed in 64 bits (the sizes are 32-bit scalars; their product may not be).
std::string Grouped(const std::string& e, bool code) {
  if (e.find(' ') == std::string::npos) return e;
  return code ? "((long)" + e + ")" : "(" + e + ")";
}

std::string FloatLiteral(double v) {
  return fmt::format("{:.9g}f", v);
}

}  // namespace

std::string OpClassOf(const json& op) {
  const OpClass* c = Find(op);
  return c ? c->op_class : "torch";
}

std::vector<std::string> StartingKernelFiles(const json& op, Language lang) {
  const OpClass* c = Find(op);
  if (!c) return {};
  return lang == Language::kCuda ? c->cuda : c->opencl;
}

std::string StartingKernelsToml(const json& op) {
  std::string out = "{";
  for (Language lang : {Language::kCuda, Language::kOpenCL}) {
    out += fmt::format("{} {} = [", lang == Language::kCuda ? "" : ",", LanguageName(lang));
    std::vector<std::string> files = StartingKernelFiles(op, lang);
    for (size_t i = 0; i < files.size(); ++i)
      out += fmt::format("{}\"{}\"", i ? ", " : "", files[i]);
    out += "]";
  }
  return out + " }";
}

std::vector<StartingKernel> StartingKernels(const json& op, const std::vector<SignatureArg>& args,
                                            size_t inputs, size_t parameters,
                                            const std::string& templates_dir) {
  const OpClass* c = Find(op);
  if (!c) return {};
  // Placeholders and their values in annotations ([0]) and in code ([1]).
  std::map<std::string, std::string> words[2];
  auto set = [&](const std::string& word, const std::string& value) {
    words[0][word] = words[1][word] = value;
  };
  auto size = [&](const std::string& word, const std::string& expr) {
    words[0][word] = Grouped(expr, false);
    words[1][word] = Grouped(expr, true);
  };
  size_t outputs = inputs + parameters;
  set("KF_X", args.at(0).name);
  set("KF_OUT", args.at(outputs).name);
  std::string cls = op["class"].get<std::string>();
  if (cls == "matmul") {
    set("KF_LHS", args.at(0).name);
    set("KF_RHS", args.at(1).name);
    size("KF_M", op.at("m").get<std::string>());
    size("KF_N", op.at("n").get<std::string>());
    size("KF_K", op.at("k").get<std::string>());
  } else if (cls == "elementwise") {
    size("KF_ELEMENTS", op.at("elements").get<std::string>());
    set("KF_EXPR", op.at("expr").get<std::string>());
  } else {
    size("KF_OUTER", op.at("outer").get<std::string>());
    size("KF_EXTENT", op.at("extent").get<std::string>());
    size("KF_INNER", op.at("inner").get<std::string>());
    if (op.contains("eps")) set("KF_EPS", FloatLiteral(op["eps"].get<double>()));
    set("KF_SCALE",
        op.value("fn", "") == "mean" ? "(1.0f / (float)" + words[1]["KF_EXTENT"] + ")" : "1.0f");
    if (cls == "layernorm") {
      set("KF_WEIGHT", args.at(inputs).name);
      set("KF_BIAS", args.at(inputs + 1).name);
    }
  }

  std::vector<StartingKernel> out;
  const std::regex placeholder("\\bKF_[A-Z]+\\b");
  std::vector<std::string> files = c->cuda;
  files.insert(files.end(), c->opencl.begin(), c->opencl.end());
  for (const std::string& file : files) {
    set("KF_PARAMS", Parameters(args, LanguageOfPath(file).value_or(Language::kOpenCL)));
    std::ifstream f(templates_dir + "/" + file);
    std::stringstream text;
    text << f.rdbuf();
    if (!f)
      throw std::runtime_error("cannot read the starting kernel " + templates_dir + "/" + file);
    std::string filled, line;
    for (std::istringstream lines(text.str()); std::getline(lines, line);) {
      const std::map<std::string, std::string>& values = words[line.rfind("// @", 0) == 0 ? 0 : 1];
      auto done = line.cbegin();
      for (auto it = std::sregex_iterator(line.begin(), line.end(), placeholder);
           it != std::sregex_iterator(); ++it) {
        auto word = values.find(it->str());
        if (word == values.end())
          throw std::runtime_error(fmt::format("{}/{}: {} has no value for a {} problem",
                                               templates_dir, file, it->str(), cls));
        filled.append(done, line.cbegin() + it->position());
        filled += word->second;
        done = line.cbegin() + it->position() + it->length();
      }
      filled.append(done, line.cend());
      filled += "\n";
    }
    out.push_back({file, filled});
  }
  return out;
}

}  // namespace kf
