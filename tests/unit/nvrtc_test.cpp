// The CUDA backend's compiler half needs no GPU: NVRTC builds cubins for sm_90a (an H100 or H200,
// compute capability 9.0) on any machine that has the toolkit. These run in CI; without NVRTC they
// are skipped and say why.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend/cuda/cuda_api.hpp"
#include "core/task.hpp"
#include "core/task_library.hpp"
#include "eval/compute_peak.hpp"
#include "eval/device_tools_source.hpp"
#include "eval/ghost_replay.hpp"
#include "eval/precheck.hpp"
#include "host/corpus.hpp"
#include "tune/space.hpp"

namespace kf {
namespace {

class Nvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    nvrtc_ = cuda::Nvrtc::Load(&error);
    if (!nvrtc_) GTEST_SKIP() << "NVRTC not available here: " << error;
  }
  std::unique_ptr<cuda::Nvrtc> nvrtc_;
};

TEST(CudaDriver, LoadsOrSaysWhy) {
  std::string error;
  auto driver = cuda::Driver::Load(&error);
  if (!driver) {
    EXPECT_FALSE(error.empty());
    GTEST_SKIP() << "no NVIDIA driver on this machine: " << error;
  }
  EXPECT_GT(driver->version(), 0);
}

// Compute capability 9.0 and 10.0 build for their architecture-specific targets, where wgmma,
// setmaxnreg and tcgen05 live; a cubin for sm_90a runs on exactly the devices that are 9.0.
TEST(NvrtcTarget, ArchSpecificWhereThereIsOne) {
  EXPECT_EQ(cuda::NvrtcTarget(90), "sm_90a");
  EXPECT_EQ(cuda::NvrtcTarget(100), "sm_100a");
  EXPECT_EQ(cuda::NvrtcTarget(80), "sm_80");
  EXPECT_EQ(cuda::NvrtcTarget(89), "sm_89");
  EXPECT_EQ(cuda::NvrtcTarget(120), "sm_120");
}

TEST_F(Nvrtc, SupportsHopper) {
  std::vector<int> archs = nvrtc_->supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
}

// Every task's CUDA kernels, and each variant's (issue 33) under its defines (a kernel generic over
// the element type through a variant's macro must build both ways, and differently).
TEST_F(Nvrtc, CompilesEveryBundledCudaKernelToAnSm90aCubin) {
  std::vector<Task> tasks = BundledTasks();
  ASSERT_FALSE(tasks.empty());
  std::map<std::string, std::string> base_ptx;  // task dir/file → PTX without a variant
  int variant_kernels = 0;
  for (const Task& base : BundledTasks()) {
    for (const std::string& v : base.variants) tasks.push_back(LoadTask(base.dir, v));
  }
  for (const Task& t : tasks) {
    SCOPED_TRACE(t.name);
    ASSERT_TRUE(t.reference.count(Language::kCuda)) << t.name << " has no CUDA reference";
    std::vector<std::string> files = {t.reference.at(Language::kCuda),
                                      t.baseline.at(Language::kCuda)};
    for (const auto& f : t.templates.at(Language::kCuda)) files.push_back(f);
    for (const auto& f : files) {
      Kernel k = LoadKernelFile(t.PathOf(f));
      CompileRequest request = CompileRequestFor(k, k.ResolveConfig({}), t.defines);
      std::vector<std::string> entries;  // every launch's, as the executor asks for them
      for (const auto& launch : k.launches) entries.push_back(launch.entry);
      cuda::NvrtcOutput out = cuda::CompileCuda(*nvrtc_, k.source, entries, request.defines, 90);
      ASSERT_TRUE(out.ok) << t.name << "/" << f << ":\n" << out.log;
      ASSERT_GT(out.cubin.size(), 4u);
      EXPECT_EQ(std::memcmp(out.cubin.data(),
                            "\x7f"
                            "ELF",
                            4),
                0)
          << f << " is not an ELF cubin";
      if (k.source.find("extern \"C\"") != std::string::npos) {
        EXPECT_EQ(out.lowered_names, entries);
      }
      const std::string key = t.dir + "/" + f;
      if (t.variant.empty()) {
        base_ptx[key] = out.ptx;
      } else if (k.source.find("KF_BF16") != std::string::npos) {
        ASSERT_TRUE(base_ptx.count(key)) << f << " is the variant's only";
        EXPECT_NE(out.ptx, base_ptx[key]) << f << " compiled the same under " << t.name;
        ++variant_kernels;
      }
    }
  }
  EXPECT_GE(variant_kernels, 8) << "gemm_f16.bf16's 5 and attention_fwd.bf16's 3";
}

// The sm_90 templates, which no GPU of this machine can run, build at every configuration their
// constraints allow on an H100 (227 KB of opt-in shared memory per block, 132 SMs) at the task's
// size of record, not only at their defaults: the tuner may pick any of them. Compiling every point
// takes minutes, so points are built until every value of every parameter has been built at least
// once (`and_every` names parameters whose pairs of values are all built: those that change the
// code's shape together).
class NvrtcHopperTemplate : public Nvrtc {
 protected:
  SearchSpace SpaceOf(const std::string& task_name, const std::string& file) {
    const std::vector<Task> tasks = BundledTasks();
    auto task = std::find_if(tasks.begin(), tasks.end(),
                             [&](const Task& t) { return t.name == task_name; });
    EXPECT_NE(task, tasks.end()) << task_name;
    if (task == tasks.end()) return SearchSpace::FromPoints({}, {});
    auto record = std::find_if(task->bench_sizes.begin(), task->bench_sizes.end(),
                               [](const SizeSet& s) { return s.name == "record"; });
    EXPECT_NE(record, task->bench_sizes.end()) << task_name;
    if (record == task->bench_sizes.end()) return SearchSpace::FromPoints({}, {});
    DeviceInfo h100;
    h100.backend = "cuda";
    h100.compute_units = 132;
    h100.max_work_group_size = 1024;
    h100.local_mem_bytes = 232448;
    h100.sub_group_width = 32;
    kernel_ = LoadKernelFile(task->PathOf(file));
    return SearchSpace::FromKernel(kernel_, ConstraintEnv(h100, record->sizes, {}));
  }

  // Builds points of `space` (of kernel_) until each value of each parameter, and each pair of
  // values of the parameters in `and_every`, has been built; returns each build's PTX.
  std::vector<std::string> CompileEachValue(const SearchSpace& space,
                                            const std::vector<std::string>& and_every = {}) {
    std::set<std::string> covered;
    std::vector<std::string> ptx;
    for (const Point& p : space.points()) {
      const Config c = space.ToConfig(p);
      bool news = false;
      std::string joint;
      for (const auto& [name, value] : c) {
        news = covered.insert(name + "=" + value).second || news;
        if (std::find(and_every.begin(), and_every.end(), name) != and_every.end())
          joint += name + "=" + value + ";";
      }
      if (!joint.empty()) news = covered.insert(joint).second || news;
      if (!news) continue;
      SCOPED_TRACE(space.Key(p));
      cuda::NvrtcOutput out = cuda::CompileCuda(
          *nvrtc_, kernel_.source, {kernel_.launches.at(0).entry}, {c.begin(), c.end()}, 90);
      EXPECT_TRUE(out.ok) << out.log;
      if (!out.ok) return ptx;
      ptx.push_back(out.ptx);
    }
    return ptx;
  }

  // Every build of `space` has wgmma; returns how many were built.
  int CompileEachValueWithWgmma(const SearchSpace& space,
                                const std::vector<std::string>& and_every = {}) {
    const std::vector<std::string> ptx = CompileEachValue(space, and_every);
    for (const std::string& p : ptx) EXPECT_NE(p.find("wgmma.mma_async"), std::string::npos);
    return static_cast<int>(ptx.size());
  }

  Kernel kernel_;
};

TEST_F(NvrtcHopperTemplate, CompilesEveryParameterValueOfTheAttentionTemplate) {
  const SearchSpace space = SpaceOf("attention_fwd", "flash_wgmma.cu");
  ASSERT_GE(space.size(), 8u);  // 3 tile widths x 3 depths x 2 schedules, less what does not fit
  ASSERT_LT(space.size(), space.product_size());   // the shared-memory constraint removes some
  EXPECT_GE(CompileEachValueWithWgmma(space), 3);  // (all 16 points take ~45 s)
}

// The persistent GEMM: every tile shape with both ways of copying (the bulk copies of COPY 0 and
// the cp.async of COPY 1 are different code), every ring depth, grouping and block count.
TEST_F(NvrtcHopperTemplate, CompilesEveryParameterValueOfThePersistentGemmTemplate) {
  const SearchSpace space = SpaceOf("gemm_f16", "gemm_wgmma_persistent.cu");
  ASSERT_LT(space.size(), space.product_size());  // BM 256 x BN 256 and deep rings do not fit
  ASSERT_GE(space.size(), 5u * 2u);               // five tile shapes x two copy modes, at least
  EXPECT_GE(CompileEachValueWithWgmma(space, {"BM", "BN", "COPY"}), 10);
}

// gemm_f32's SGEMM template is plain fp32 FMAs (the task's precision is fp32: no tensor-core
// instruction may appear), and its TF32 tensor-core kernel, kept beside it for the task's tf32
// setting and not a template of the fp32 task, is mma.sync on operands rounded by cvt.rna.tf32.
TEST_F(NvrtcHopperTemplate, CompilesEveryParameterValueOfTheGemmF32Kernels) {
  const std::vector<Task> tasks = BundledTasks();
  auto task =
      std::find_if(tasks.begin(), tasks.end(), [](const Task& t) { return t.name == "gemm_f32"; });
  ASSERT_NE(task, tasks.end());
  const std::vector<std::string>& templates = task->templates.at(Language::kCuda);
  auto listed = [&](const std::string& file) {
    return std::find(templates.begin(), templates.end(), file) != templates.end();
  };
  EXPECT_TRUE(listed("gemm_sm90.cu"));
  EXPECT_FALSE(listed("gemm_tf32_mma.cu")) << "TF32 operands fail the fp32 precision probe";

  const SearchSpace sgemm_space = SpaceOf("gemm_f32", "gemm_sm90.cu");
  ASSERT_GE(sgemm_space.size(), 16u);
  ASSERT_LT(sgemm_space.size(), sgemm_space.product_size());  // registers and threads prune
  for (const std::string& ptx : CompileEachValue(sgemm_space)) {
    EXPECT_NE(ptx.find("fma.rn.f32"), std::string::npos);
    EXPECT_EQ(ptx.find("mma."), std::string::npos);
    EXPECT_EQ(ptx.find(".tf32"), std::string::npos);
  }

  const SearchSpace tf32_space = SpaceOf("gemm_f32", "gemm_tf32_mma.cu");
  EXPECT_NO_THROW(CheckKernelSignature(*task, kernel_));  // not a template: checked here
  ASSERT_GE(tf32_space.size(), 16u);
  ASSERT_LT(tf32_space.size(), tf32_space.product_size());
  for (const std::string& ptx : CompileEachValue(tf32_space)) {
    EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
    EXPECT_NE(ptx.find("cvt.rna.tf32.f32"), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos);
  }
}

// The evaluator's own kernels (eval/device_tools_source.cpp) for every element type, as the
// executor compiles them on a GPU.
TEST_F(Nvrtc, CompilesTheEvaluatorsOwnKernelsForEveryElementType) {
  for (int dt = 0; dt <= 6; ++dt) {
    cuda::NvrtcOutput out =
        cuda::CompileCuda(*nvrtc_, kDeviceToolsSource, {"kf_random"},
                          {{"KF_CUDA", "1"}, {"KF_DT", std::to_string(dt)}}, 90);
    ASSERT_TRUE(out.ok) << "KF_DT " << dt << ":\n" << out.log;
    for (const char* entry :
         {"kf_differ", "kf_compare", "kf_fill", "kf_copy", "kf_hash", "kf_scan"})
      EXPECT_NE(out.ptx.find(std::string(".entry ") + entry), std::string::npos) << entry;
  }
}

// wgmma and setmaxnreg exist only for sm_90a: a device of compute capability 9.0 gets them.
TEST_F(Nvrtc, HopperGetsItsArchSpecificInstructions) {
  const char* src = R"(extern "C" __global__ void __launch_bounds__(128) f(float* x) {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::: "memory");
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  x[threadIdx.x] = 1.0f;
})";
  cuda::NvrtcOutput out = cuda::CompileCuda(*nvrtc_, src, {"f"}, {}, 90);
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_NE(out.ptx.find(".target sm_90a"), std::string::npos) << out.ptx.substr(0, 400);
}

TEST_F(Nvrtc, LowersCppNames) {
  cuda::NvrtcOutput out =
      cuda::CompileCuda(*nvrtc_, "__global__ void f(float* x) { x[0] = 1; }", {"f"}, {}, 90);
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_EQ(out.lowered_names, std::vector<std::string>{"_Z1fPf"});
  // One module of several entry points (a candidate of several launches): each lowered, in order.
  out = cuda::CompileCuda(*nvrtc_,
                          "__global__ void scan(float* x, int* t) { x[0] = 1; }\n"
                          "__global__ void add(float* x, int* t) { x[1] = t[0]; }\n",
                          {"add", "scan"}, {}, 90);
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_EQ(out.lowered_names, (std::vector<std::string>{"_Z3addPfPi", "_Z4scanPfPi"}));
  out = cuda::CompileCuda(*nvrtc_, "__global__ void f(float* x) { x[0] = 1; }", {"f", "g"}, {}, 90);
  EXPECT_FALSE(out.ok);
  // NVRTC itself refuses a name expression of no such function; the log names it.
  EXPECT_TRUE(out.log.find("\"g\" is undefined") != std::string::npos ||
              out.log.find("entry point 'g' not found") != std::string::npos)
      << out.log;
}

TEST_F(Nvrtc, SyntaxErrorReturnsTheLog) {
  cuda::NvrtcOutput out = cuda::CompileCuda(
      *nvrtc_, "extern \"C\" __global__ void f(float* x) { x[0] = ; }", {"f"}, {}, 90);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("expected an expression"), std::string::npos) << out.log;
}

TEST_F(Nvrtc, DefinesReachTheSource) {
  const char* src =
      "extern \"C\" __global__ void f(float* x) { static_assert(BLOCK == 128, \"BLOCK\"); }";
  EXPECT_TRUE(cuda::CompileCuda(*nvrtc_, src, {"f"}, {{"BLOCK", "128"}}, 90).ok);
  EXPECT_FALSE(cuda::CompileCuda(*nvrtc_, src, {"f"}, {{"BLOCK", "64"}}, 90).ok);
}

// The corpus's CUDA kernels that must build (all but the compile errors), the ghost replay's no-op
// for every bundled task, and the peak-rate kernels (FMA, fp16/bf16/TF32 MMA) build for sm_90a.
TEST_F(Nvrtc, CompilesTheCorpusTheGhostsAndThePeakKernels) {
  auto compiles = [&](const std::string& what, const std::string& source, const std::string& entry,
                      const Config& config) {
    cuda::NvrtcOutput out =
        cuda::CompileCuda(*nvrtc_, source, {entry}, {config.begin(), config.end()}, 90);
    EXPECT_TRUE(out.ok) << what << ":\n" << out.log;
  };
  std::vector<CorpusEntry> corpus =
      LoadCorpus(std::string(KF_TEST_DATA) + "/corpus/corpus.toml", Language::kCuda);
  int built = 0;
  for (const CorpusEntry& e : corpus) {
    if (e.statuses.size() == 1 && e.statuses[0] == Status::kCompileError) continue;
    Kernel k = LoadKernelFile(e.path);
    compiles(e.path, k.source, k.launches.at(0).entry, k.ResolveConfig({}));
    ++built;
  }
  EXPECT_GE(built, 3);
  for (const Task& t : BundledTasks())
    compiles("ghost of " + t.name, GhostKernelSource(t, Language::kCuda), kGhostEntry, {});
  for (const auto& [name, source] : PeakKernelSources("cuda"))
    compiles("peak kernel " + name, source, "kf_peak_fma", {});
}

}  // namespace
}  // namespace kf
