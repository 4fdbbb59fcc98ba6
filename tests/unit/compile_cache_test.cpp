#include "eval/compile_cache.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace kf {
namespace {

namespace fs = std::filesystem;

DeviceInfo FakeInfo(const char* backend, const char* name, const char* driver, const char* compiler,
                    const char* arch) {
  DeviceInfo d;
  d.backend = backend;
  d.name = name;
  d.driver_version = driver;
  d.compiler_version = compiler;
  d.arch = arch;
  return d;
}

// A device that only counts compiles.
class CountingDevice : public Device {
 public:
  const DeviceInfo& info() const override { return info_; }
  CompileResult Compile(const CompileRequest& r) override {
    ++compiles;
    CompileResult c;
    c.ok = r.source.find("error") == std::string::npos;
    c.log = c.ok ? "" : "syntax error";
    c.artifact.symbols = r.entries;
    for (char ch : r.source) c.artifact.binary.push_back(static_cast<std::byte>(ch));
    return c;
  }
  std::unique_ptr<LoadedKernel> Load(const Artifact&, const std::string&, std::string*) override {
    return nullptr;
  }
  DeviceStatus Alloc(size_t, BufferHandle*) override { return DeviceStatus::Fail("no"); }
  void Free(BufferHandle) override {}
  DeviceStatus Write(BufferHandle, const void*, size_t) override {
    return DeviceStatus::Fail("no");
  }
  DeviceStatus Read(BufferHandle, void*, size_t) override { return DeviceStatus::Fail("no"); }
  DeviceStatus Fill(BufferHandle, uint32_t, size_t) override { return DeviceStatus::Fail("no"); }
  LaunchResult Run(std::span<const LaunchStep>, std::span<const KernelArg>) override { return {}; }
  DeviceStatus FlushCache() override { return DeviceStatus::Ok(); }
  DeviceStatus HealthCheck() override { return DeviceStatus::Ok(); }
  DeviceStatus View(BufferHandle, size_t, size_t, BufferHandle*) override {
    return DeviceStatus::Fail("no");
  }
  size_t ViewAlignment() const override { return 256; }
  DeviceStatus Enqueue(LoadedKernel&, std::span<const KernelArg>, const Launch&) override {
    return DeviceStatus::Fail("no");
  }
  DeviceStatus EnqueueTimed(std::span<const LaunchStep>, std::span<const KernelArg>, int) override {
    return DeviceStatus::Fail("no");
  }
  DeviceStatus ElapsedMs(int, double*) override { return DeviceStatus::Fail("no"); }
  DeviceStatus EnqueueFlushCache() override { return DeviceStatus::Ok(); }
  DeviceStatus Synchronize() override { return DeviceStatus::Ok(); }

  DeviceInfo info_ = FakeInfo("opencl", "fake", "1", "1", "");
  int compiles = 0;
};

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kf_cache_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CompileCacheTest, KeyCoversEverythingThatDecidesTheArtifact) {
  CompileCache cache(dir_.string());
  DeviceInfo d = FakeInfo("cuda", "H200", "13.0", "nvrtc 13.0", "sm_90");
  CompileRequest r{"src", {"f"}, {{"BLOCK", "128"}}};
  std::string base = cache.Key(d, r);
  EXPECT_EQ(base, cache.Key(d, r));
  auto differs = [&](DeviceInfo d2, CompileRequest r2) { return cache.Key(d2, r2) != base; };
  EXPECT_TRUE(differs(d, {"src2", {"f"}, {{"BLOCK", "128"}}}));
  EXPECT_TRUE(differs(d, {"src", {"g"}, {{"BLOCK", "128"}}}));
  // A module of two entry points is its own artifact (its symbols differ).
  EXPECT_TRUE(differs(d, {"src", {"f", "g"}, {{"BLOCK", "128"}}}));
  EXPECT_TRUE(differs(d, {"src", {"f"}, {{"BLOCK", "256"}}}));
  DeviceInfo d2 = d;
  d2.arch = "sm_80";
  EXPECT_TRUE(differs(d2, r));
  d2.arch = "sm_100";  // built for sm_100a, as sm_90 is for sm_90a: each arch its own key
  EXPECT_TRUE(differs(d2, r));
  d2 = d;
  d2.driver_version = "13.1";
  EXPECT_TRUE(differs(d2, r));
  d2 = d;
  d2.compiler_version = "nvrtc 12.9";
  EXPECT_TRUE(differs(d2, r));
}

TEST_F(CompileCacheTest, RepeatedCandidatesCompileOnce) {
  CompileCache cache(dir_.string());
  CountingDevice dev;
  CompileResult a = CompileCached(dev, cache, {"kernel source", {"f"}, {}});
  EXPECT_TRUE(a.ok);
  EXPECT_FALSE(a.cache_hit);
  CompileResult b = CompileCached(dev, cache, {"kernel source", {"f"}, {}});
  EXPECT_TRUE(b.cache_hit);
  EXPECT_EQ(dev.compiles, 1);
  EXPECT_EQ(b.artifact.binary, a.artifact.binary);
  EXPECT_EQ(b.artifact.symbols, std::vector<std::string>{"f"});
  // Failures are not cached: the log must be there every time.
  CompileCached(dev, cache, {"an error", {"f"}, {}});
  CompileResult c = CompileCached(dev, cache, {"an error", {"f"}, {}});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.log, "syntax error");
  EXPECT_EQ(dev.compiles, 3);
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(dir_ / "compile")) {
    EXPECT_EQ(e.path().extension(), ".bin") << e.path();
  }
}

// A builder process compiles with an offline compiler for the device it was told of; the executor
// on that device must find the artifact under the same key, and the other way round.
TEST_F(CompileCacheTest, ABuildersArtifactIsTheDevicesAndTheOtherWayRound) {
  class Offline : public Compiler {
   public:
    CompileResult Compile(const CompileRequest& r) override {
      ++compiles;
      CompileResult c;
      c.ok = true;
      c.artifact.symbols = r.entries;
      c.artifact.binary.push_back(std::byte{42});
      return c;
    }
    int compiles = 0;
  };
  CompileCache cache(dir_.string());
  CountingDevice dev;
  Offline builder;
  CompileResult built = CompileCached(builder, dev.info(), cache, {"kernel a", {"f"}, {}});
  EXPECT_FALSE(built.cache_hit);
  CompileResult found = CompileCached(dev, cache, {"kernel a", {"f"}, {}});
  EXPECT_TRUE(found.cache_hit);
  EXPECT_EQ(found.artifact.binary, built.artifact.binary);
  EXPECT_EQ(dev.compiles, 0);
  CompileCached(dev, cache, {"kernel b", {"f"}, {}});
  EXPECT_TRUE(CompileCached(builder, dev.info(), cache, {"kernel b", {"f"}, {}}).cache_hit);
  EXPECT_EQ(builder.compiles, 1);
}

TEST_F(CompileCacheTest, CorruptOrTruncatedEntriesAreMisses) {
  CompileCache cache(dir_.string());
  CountingDevice dev;
  CompileRequest r{"kernel source", {"f"}, {}};
  std::string key = cache.Key(dev.info(), r);
  std::ofstream(dir_ / "compile" / (key + ".bin")) << "garbage";
  EXPECT_FALSE(cache.Get(key).has_value());
  std::ofstream(dir_ / "compile" / (key + ".bin")) << "KFART2\nf\n0\n";  // header, no bytes
  EXPECT_FALSE(cache.Get(key).has_value());
}

TEST_F(CompileCacheTest, TheListingTravelsWithTheBinary) {
  CompileCache cache(dir_.string());
  Artifact a;
  a.symbols = {"_Z1fPf", "_Z4scanPf"};  // one module, two entry points
  a.listing = "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd7];\n";
  for (int i = 0; i < 300; ++i) a.binary.push_back(static_cast<std::byte>(i));
  cache.Put("k", a);
  std::optional<Artifact> b = cache.Get("k");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->symbols, a.symbols);
  EXPECT_EQ(b->listing, a.listing);
  EXPECT_EQ(b->binary, a.binary);
}

TEST_F(CompileCacheTest, EmptyDirDisablesTheCache) {
  CompileCache cache("");
  CountingDevice dev;
  CompileCached(dev, cache, {"s", {"f"}, {}});
  CompileCached(dev, cache, {"s", {"f"}, {}});
  EXPECT_EQ(dev.compiles, 2);
}

}  // namespace
}  // namespace kf
