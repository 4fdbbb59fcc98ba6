// The C++ half of `kfoundry import` without Python: the task.toml written for an inspection (the
// answer kb_inspect.py gives) loads, in the documented signature order, with tolerances by dtype,
// the cost of every tensor, integer draws within every set's range, and an answer that cannot
// make a task refused with one line naming the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/kernel.hpp"
#include "core/task.hpp"
#include "torch/import_problem.hpp"
#include "torch/python_process.hpp"
#include "torch/starting_kernels.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The shape of 95_CrossEntropyLoss's answer, with a parameter, a buffer and a 0-d output added.
json Inspection() {
  return json::parse(R"({
    "description": "A model.",
    "sizes": [{"name": "batch_size", "value": 4096}, {"name": "num_classes", "value": 1000}],
    "inputs": [
      {"name": "predictions", "dtype": "DT", "shape": ["batch_size", "num_classes"],
       "dist": {"kind": "normal", "mean": 0, "std": 1}},
      {"name": "targets", "dtype": "i64", "shape": ["batch_size"],
       "dist": {"kind": "randint", "low": "0", "high": "num_classes"}}],
    "parameters": [
      {"name": "weight", "torch_name": "weight", "kind": "parameter", "dtype": "DT",
       "shape": ["num_classes"], "init": {"kind": "constant", "value": 1.0}},
      {"name": "batch_size", "torch_name": "batch_size", "kind": "buffer", "dtype": "DT",
       "shape": [], "init": {"kind": "uniform", "low": -0.25, "high": 0.5}}],
    "outputs": [{"name": "out", "dtype": "DT", "shape": []}],
    "size_sets": {
      "bench": {"batch_size": 4096, "num_classes": 1000},
      "cpu": {"batch_size": 256, "num_classes": 125},
      "check": [{"name": "tiny", "sizes": {"batch_size": 3, "num_classes": 5}},
                {"name": "ragged", "sizes": {"batch_size": 37, "num_classes": 29}}]}
  })");
}

std::string WithDType(std::string text, const std::string& dtype) {
  for (size_t at; (at = text.find("\"DT\"")) != std::string::npos;)
    text.replace(at, 4, "\"" + dtype + "\"");
  return text;
}

Task Load(const json& inspection, const std::string& dtype) {
  fs::path dir = fs::temp_directory_path() / ("kf_torch_import_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "model.py") << "class Model: pass\n";
  json j = json::parse(WithDType(inspection.dump(), dtype));
  std::string toml = TaskTomlFromInspection(j, "ce", "/p/ce.py", "model.py");
  Task t = LoadTaskFromText(dir.string(), toml);
  fs::remove_all(dir);
  return t;
}

TEST(TorchImport, WritesATaskInTheSignatureOrder) {
  Task t = Load(Inspection(), "f32");
  std::vector<std::string> names;
  for (const ArgSpec& a : t.args) names.push_back(a.name);
  // Inputs, parameters and buffers, outputs, sizes; a tensor named like a size gets "_t".
  EXPECT_EQ(names, (std::vector<std::string>{"predictions", "targets", "weight", "batch_size_t",
                                             "out", "batch_size", "num_classes"}));
  EXPECT_EQ(t.name, "ce");
  EXPECT_EQ(t.torch_reference, "model.py");
  EXPECT_TRUE(t.Languages().empty());
  EXPECT_EQ(t.args[4].role, ArgRole::kOut);
  ASSERT_EQ(t.args[4].shape.size(), 1u);  // 0-d: one element
  EXPECT_EQ(t.args[4].shape[0].text(), "1");
  EXPECT_FALSE(t.args[5].is_buffer);
  EXPECT_EQ(t.args[5].dtype, DType::kI32);
  EXPECT_EQ(t.BenchSizes("", "gpu").sizes.at("batch_size"), 4096);
  EXPECT_EQ(t.BenchSizes("", "cpu").sizes.at("num_classes"), 125);
  ASSERT_EQ(t.check_sizes.size(), 2u);
  EXPECT_EQ(t.check_sizes[1].name, "ragged");
  EXPECT_EQ(t.check_sizes[1].sizes.at("num_classes"), 29);
}

TEST(TorchImport, InitsFromDistributionsAndModuleValues) {
  Task t = Load(Inspection(), "f32");
  EXPECT_EQ(t.args[0].init.kind, InitSpec::Kind::kNormal);
  // randint(0, num_classes): the bounds at each set, [0, 5) at the tiny one.
  EXPECT_EQ(t.args[1].init.kind, InitSpec::Kind::kRandInt);
  EXPECT_EQ(t.args[1].init.low.text(), "0");
  EXPECT_EQ(t.args[1].init.high.text(), "num_classes");
  EXPECT_EQ(t.args[1].init.BoundsAt(SizesEnv(t.check_sizes[0].sizes)),
            (std::pair<double, double>{0, 5}));
  // A parameter built constant is drawn around its value; a non-constant one over its range.
  EXPECT_EQ(t.args[2].init.kind, InitSpec::Kind::kUniform);
  EXPECT_EQ(t.args[2].init.a, 0.5);
  EXPECT_EQ(t.args[2].init.b, 1.5);
  EXPECT_EQ(t.args[3].init.a, -0.25);
  EXPECT_EQ(t.args[3].init.b, 0.5);
}

TEST(TorchImport, ToleranceByDTypeAndCostOfEveryTensor) {
  Task f32 = Load(Inspection(), "f32");
  Tolerance tol = f32.tolerance.At(f32.BenchSizes("", "gpu").sizes);
  EXPECT_DOUBLE_EQ(tol.atol, 1e-4);
  EXPECT_DOUBLE_EQ(tol.rtol, 1e-4);
  EXPECT_EQ(tol.max_bad_ratio, 1.0);  // allclose per element, no cap on the share past 1%
  Task f16 = Load(Inspection(), "f16");
  tol = f16.tolerance.At(f16.BenchSizes("", "gpu").sizes);
  EXPECT_DOUBLE_EQ(tol.rtol, 1e-2);
  // bf16 (torch.bfloat16): the type carried into the task, and a tolerance wider than fp16's.
  Task bf16 = Load(Inspection(), "bf16");
  EXPECT_EQ(bf16.args[0].dtype, DType::kBF16);
  tol = bf16.tolerance.At(bf16.BenchSizes("", "gpu").sizes);
  EXPECT_DOUBLE_EQ(tol.rtol, 8e-2);
  Env env = SizesEnv(f32.BenchSizes("", "gpu").sizes);
  EXPECT_EQ(f32.min_bytes.Eval(env), 4.0 * 4096 * 1000 + 8 * 4096 + 4 * 1000 + 4 + 4);
  EXPECT_EQ(f16.min_bytes.Eval(env), 2.0 * 4096 * 1000 + 8 * 4096 + 2 * 1000 + 2 + 2);
}

TEST(TorchImport, AnswersThatMakeNoTaskAreRefused) {
  json j = Inspection();
  j["sizes"] = json::array();
  try {
    TaskTomlFromInspection(j, "ce", "/p/ce.py", "model.py");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/p/ce.py: import: no module-level integer", 0), 0u)
        << e.what();
  }
  j = Inspection();
  j.erase("size_sets");
  try {
    TaskTomlFromInspection(j, "ce", "/p/ce.py", "model.py");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed"), std::string::npos) << e.what();
  }
  j = json::parse(WithDType(Inspection().dump(), "complex64"));
  EXPECT_THROW(TaskTomlFromInspection(j, "ce", "/p/ce.py", "model.py"), InputError);
}

// Starting kernels (part 3): a recognised op class gives the task that op_class and templates (no
// baseline kernel), and the templates of src/torch/templates filled in for the signature: every
// placeholder replaced, the parameters in the task's order, sizes in annotations as they are and
// in code in 64 bits. Without an op (or of an unknown class) nothing is offered.
TEST(TorchImport, StartingKernelsForARecognisedOpClass) {
  json j = json::parse(WithDType(Inspection().dump(), "f32"));
  j["inputs"] = json::array({j["inputs"][0]});  // predictions only
  j["parameters"] = json::array();
  j["outputs"][0]["shape"] = {"batch_size", "num_classes"};
  j["op"] = {
      {"class", "softmax"}, {"outer", "batch_size"}, {"extent", "num_classes"}, {"inner", "1"}};
  std::vector<SignatureArg> signature;
  std::string toml = TaskTomlFromInspection(j, "sm", "/p/sm.py", "model.py", &signature);
  EXPECT_NE(toml.find("op_class = \"softmax\""), std::string::npos) << toml;
  // No baseline kernel: PyTorch eager is the time to beat.
  EXPECT_EQ(toml.find("baseline ="), std::string::npos) << toml;
  EXPECT_NE(toml.find("templates = { cuda = [\"softmax_rows.cu\", \"softmax_warp.cu\", "
                      "\"softmax_lines.cu\"], opencl = [\"softmax_items.cl\", "
                      "\"softmax_rowvec.cl\", \"softmax_group.cl\"] }"),
            std::string::npos)
      << toml;
  ASSERT_EQ(signature.size(), 4u);
  EXPECT_EQ(signature[1].name, "out");
  EXPECT_TRUE(signature[1].output);
  EXPECT_FALSE(signature[3].tensor);

  std::vector<StartingKernel> kernels =
      StartingKernels(j["op"], signature, 1, 0, TorchHelpersDir() + "/templates");
  ASSERT_EQ(kernels.size(), 6u);  // CUDA's three, then OpenCL's
  for (const StartingKernel& k : kernels) {
    SCOPED_TRACE(k.file);
    EXPECT_EQ(k.text.find("KF_"), std::string::npos) << k.text;
    bool cuda = k.file.substr(k.file.size() - 3) == ".cu";
    EXPECT_NE(k.text.find(cuda ? "(const float* __restrict__ predictions, float* __restrict__ out, "
                                 "int batch_size, int num_classes)"
                               : "(__global const float* predictions, __global float* out, "
                                 "int batch_size, int num_classes)"),
              std::string::npos)
        << k.text;
    Kernel parsed = ParseKernel(k.file, k.text);  // the annotations parse
    EXPECT_FALSE(parsed.params.empty());
  }
  // A product of sizes: as written in the annotation, in 64 bits in the code.
  j["op"]["inner"] = "num_classes * batch_size";
  kernels = StartingKernels(j["op"], signature, 1, 0, TorchHelpersDir() + "/templates");
  ASSERT_EQ(kernels[3].file, "softmax_items.cl");
  EXPECT_NE(kernels[3].text.find("@grid ceil_div(batch_size * (num_classes * batch_size), BLOCK)"),
            std::string::npos)
      << kernels[3].text;
  EXPECT_NE(kernels[3].text.find("inner = ((long)num_classes * batch_size)"), std::string::npos)
      << kernels[3].text;
  ASSERT_EQ(kernels[0].file, "softmax_rows.cu");
  EXPECT_NE(kernels[0].text.find("@grid batch_size * (num_classes * batch_size)"),
            std::string::npos)
      << kernels[0].text;
  // An fp16 tensor is CUDA's __half (every .cu template includes cuda_fp16.h), OpenCL's half.
  signature[0].dtype = DType::kF16;
  kernels = StartingKernels(j["op"], signature, 1, 0, TorchHelpersDir() + "/templates");
  EXPECT_NE(kernels[0].text.find("(const __half* __restrict__ predictions,"), std::string::npos);
  EXPECT_NE(kernels[0].text.find("#include <cuda_fp16.h>"), std::string::npos);
  EXPECT_NE(kernels[3].text.find("(__global const half* predictions,"), std::string::npos);

  j["op"] = nullptr;
  toml = TaskTomlFromInspection(j, "sm", "/p/sm.py", "model.py");
  EXPECT_NE(toml.find("op_class = \"torch\""), std::string::npos);
  EXPECT_EQ(toml.find("templates"), std::string::npos);
  EXPECT_TRUE(StartingKernels(j["op"], signature, 1, 0, TorchHelpersDir() + "/templates").empty());
  EXPECT_TRUE(StartingKernelFiles(json{{"class", "conv"}}, Language::kCuda).empty());
  EXPECT_TRUE(StartingKernelFiles(json{{"class", "conv"}}, Language::kOpenCL).empty());
}

TEST(TorchImport, TaskNameIsTheStem) {
  EXPECT_EQ(ImportedTaskName("/a/36_RMSNorm_.py"), "36_RMSNorm");
  EXPECT_EQ(ImportedTaskName("19_ReLU.py"), "19_ReLU");
}

}  // namespace
}  // namespace kf
