// The evaluator's own device kernels against the host: inputs drawn on the device are the ones
// philox.hpp draws on the host, bit for bit; the device comparison gives the host comparison's
// figures on the same buffers; fills, copies, hashes, scans and differences do what they say.
// On PoCL here, on the GPU where there is one (skipped, saying so, without the device).
#include "eval/device_tools.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backend/registry.hpp"
#include "eval/compare.hpp"
#include "eval/philox.hpp"
#include "kf_process.hpp"

namespace kf {
namespace {

class DeviceTools_ : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    backends_ = MakeBackends();
    std::string error;
    device_ = OpenDevice(backends_, GetParam(), &error);
    if (!device_) GTEST_SKIP() << "no " << GetParam() << " device here: " << error;
    cache_ = std::make_unique<CompileCache>(KF_TEST_CACHE);
    tools_ = std::make_unique<DeviceTools>(*device_, *cache_);
  }
  void TearDown() override {
    for (BufferHandle h : buffers_) device_->Free(h);
  }
  BufferHandle Alloc(size_t bytes) {
    BufferHandle h = 0;
    EXPECT_TRUE(device_->Alloc(bytes, &h).ok());
    buffers_.push_back(h);
    return h;
  }
  std::vector<std::byte> ReadBack(BufferHandle h, size_t bytes) {
    std::vector<std::byte> out(bytes);
    EXPECT_TRUE(device_->Read(h, out.data(), bytes).ok());
    return out;
  }
  std::vector<std::unique_ptr<Backend>> backends_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<CompileCache> cache_;
  std::unique_ptr<DeviceTools> tools_;
  std::vector<BufferHandle> buffers_;
};

TEST_P(DeviceTools_, InputsDrawnOnTheDeviceAreTheHostsBitForBit) {
  const size_t n = 100003;
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI32}) {
    for (InitSpec::Kind kind : {InitSpec::Kind::kNormal, InitSpec::Kind::kUniform}) {
      double a = kind == InitSpec::Kind::kNormal ? 0.5 : -3.0;
      double b = kind == InitSpec::Kind::kNormal ? 2.0 : 40.0;
      BufferHandle buf = Alloc(n * DTypeSize(t));
      ASSERT_TRUE(tools_->Draw(buf, t, n, kind, a, b, 0x1234567890abcdefull, 7).ok());
      HostBuffer host = DrawOnHost(t, n, kind, a, b, 0x1234567890abcdefull, 7);
      EXPECT_EQ(ReadBack(buf, n * DTypeSize(t)), host.bytes)
          << DTypeName(t) << (kind == InitSpec::Kind::kNormal ? " normal" : " uniform");
    }
  }
  // Signed and spread: a normal draw has its mean and deviation, and a different seed differs.
  HostBuffer h = DrawOnHost(DType::kF32, n, InitSpec::Kind::kNormal, 0, 1, 99, 0);
  double sum = 0, sq = 0;
  for (size_t i = 0; i < n; ++i) {
    double v = LoadElement(h.bytes.data(), DType::kF32, i);
    sum += v;
    sq += v * v;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(sq / n), 1.0, 0.02);
  EXPECT_NE(DrawOnHost(DType::kF32, 8, InitSpec::Kind::kNormal, 0, 1, 100, 0).bytes,
            DrawOnHost(DType::kF32, 8, InitSpec::Kind::kNormal, 0, 1, 99, 0).bytes);
}

// randint: integers in [low, high) on the device, every one reached, never high (the float sum
// low + (high - low) * u rounds up to high unless the draw stops short of it), and the host's
// mirror bit for bit.
TEST_P(DeviceTools_, RandIntDrawsStayInRange) {
  const size_t n = 200003;
  for (DType t : {DType::kI32, DType::kI64, DType::kU8}) {
    for (auto [low, high] : {std::pair{0.0, 7.0}, std::pair{5.0, 8.0}, std::pair{1000.0, 65536.0},
                             std::pair{0.0, 16777216.0}}) {
      if (t == DType::kU8 && high > 256) continue;
      BufferHandle buf = Alloc(n * DTypeSize(t));
      ASSERT_TRUE(tools_->Draw(buf, t, n, InitSpec::Kind::kRandInt, low, high, 0xfeedull, 3).ok());
      std::vector<std::byte> got = ReadBack(buf, n * DTypeSize(t));
      EXPECT_EQ(got, DrawOnHost(t, n, InitSpec::Kind::kRandInt, low, high, 0xfeedull, 3).bytes);
      double least = high, most = low;
      for (size_t i = 0; i < n; ++i) {
        double v = LoadElement(got.data(), t, i);
        least = std::min(least, v);
        most = std::max(most, v);
      }
      EXPECT_GE(least, low) << DTypeName(t) << " [" << low << ", " << high << ")";
      EXPECT_LT(most, high) << DTypeName(t) << " [" << low << ", " << high << ")";
      if (high - low < 10) {
        EXPECT_EQ(least, low) << DTypeName(t);
        EXPECT_EQ(most, high - 1) << DTypeName(t);
      }
    }
  }
}

TEST_P(DeviceTools_, TheDeviceComparisonGivesTheHostComparisonsFigures) {
  const size_t n = 50000;
  Tolerance tol{1e-3, 1e-2, 0};
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    HostBuffer ref = DrawOnHost(t, n, InitSpec::Kind::kNormal, 0, 1, 5, 0);
    HostBuffer out = ref;
    std::mt19937 rng(3);
    const uint32_t poison = PoisonPattern(t);
    for (int k = 0; k < 300; ++k) {
      size_t i = rng() % n;
      switch (k % 5) {
        case 0:
          StoreElement(out.bytes.data(), t, i, LoadElement(ref.bytes.data(), t, i) * 1.001);
          break;
        case 1:
          StoreElement(out.bytes.data(), t, i, LoadElement(ref.bytes.data(), t, i) + 0.5);
          break;
        case 2: StoreElement(out.bytes.data(), t, i, std::nan("")); break;
        case 3: StoreElement(out.bytes.data(), t, i, INFINITY); break;
        case 4: {  // never written: the poison pattern
          size_t size = DTypeSize(t);
          for (size_t b = 0; b < size; ++b)
            out.bytes[i * size + b] =
                static_cast<std::byte>((poison >> (8 * ((i * size + b) % 4))) & 0xff);
          break;
        }
      }
    }
    BufferHandle r = Alloc(ref.bytes.size()), o = Alloc(out.bytes.size());
    ASSERT_TRUE(device_->Write(r, ref.bytes.data(), ref.bytes.size()).ok());
    ASSERT_TRUE(device_->Write(o, out.bytes.data(), out.bytes.size()).ok());
    Figures dev;
    ASSERT_TRUE(tools_->Compare(r, o, t, n, tol, poison, &dev).ok());
    Figures host = CompareOutput(ref, out, poison, tol);
    SCOPED_TRACE(std::string(DTypeName(t)));
    EXPECT_GT(host.out_of_tol, 100);
    EXPECT_EQ(dev.elements, host.elements);
    EXPECT_EQ(dev.unwritten, host.unwritten);
    EXPECT_EQ(dev.nan_count, host.nan_count);
    EXPECT_EQ(dev.over_1pct, host.over_1pct);
    EXPECT_EQ(dev.out_of_tol, host.out_of_tol);
    EXPECT_EQ(dev.first_bad, host.first_bad);
    EXPECT_EQ(dev.worst, host.worst);
    EXPECT_DOUBLE_EQ(dev.max_abs_err, host.max_abs_err);
    EXPECT_DOUBLE_EQ(dev.max_rel_err, host.max_rel_err);
    // Identical buffers: nothing to report.
    Figures same;
    ASSERT_TRUE(tools_->Compare(r, r, t, n, tol, poison, &same).ok());
    EXPECT_EQ(same.out_of_tol, 0);
    EXPECT_EQ(same.max_abs_err, 0);
    int64_t differing = 0;
    ASSERT_TRUE(tools_->Differ(r, o, t, n, &differing).ok());
    int64_t expected = 0;
    size_t size = DTypeSize(t);
    for (size_t i = 0; i < n; ++i)
      expected += std::memcmp(ref.bytes.data() + i * size, out.bytes.data() + i * size, size) != 0;
    EXPECT_EQ(differing, expected);
  }
}

TEST_P(DeviceTools_, FillCopyHashAndScanWorkOnByteRanges) {
  const size_t bytes = 10007;  // not a multiple of 4
  BufferHandle a = Alloc(bytes), b = Alloc(bytes);
  ASSERT_TRUE(tools_->Fill(a, 0, bytes, 0xA5A5A5A5u).ok());
  RangeScan scan;
  ASSERT_TRUE(tools_->Scan(a, 0, bytes, 0xA5A5A5A5u, &scan).ok());
  EXPECT_EQ(scan.changed, 0);
  EXPECT_EQ(scan.first, -1);
  // A few bytes past an unaligned offset change: the scan of that range finds exactly them.
  std::vector<std::byte> host = ReadBack(a, bytes);
  host[5001] = std::byte{0};
  host[5003] = std::byte{1};
  ASSERT_TRUE(device_->Write(a, host.data(), bytes).ok());
  ASSERT_TRUE(tools_->Scan(a, 4999, 100, 0xA5A5A5A5u, &scan).ok());
  EXPECT_EQ(scan.changed, 2);
  EXPECT_EQ(scan.first, 2);
  EXPECT_EQ(scan.last, 4);
  // A pattern keeps its phase with the buffer: bytes 1..3 of 0x11223344 from offset 1.
  ASSERT_TRUE(tools_->Fill(b, 1, 3, 0x11223344u).ok());
  std::vector<std::byte> filled = ReadBack(b, 4);
  EXPECT_EQ(filled[1], std::byte{0x33});
  EXPECT_EQ(filled[3], std::byte{0x11});
  // Copies (aligned and not) and hashes.
  ASSERT_TRUE(tools_->Copy(a, 0, b, 0, bytes).ok());
  uint64_t ha = 0, hb = 0;
  ASSERT_TRUE(tools_->Hash(a, 0, bytes, &ha).ok());
  ASSERT_TRUE(tools_->Hash(b, 0, bytes, &hb).ok());
  EXPECT_EQ(ha, hb);
  EXPECT_EQ(ReadBack(b, bytes), ReadBack(a, bytes));
  ASSERT_TRUE(tools_->Copy(a, 3, b, 1, 50).ok());
  std::vector<std::byte> ra = ReadBack(a, bytes), rb = ReadBack(b, bytes);
  EXPECT_TRUE(std::equal(ra.begin() + 3, ra.begin() + 53, rb.begin() + 1));
  host[bytes - 1] = std::byte{7};  // the last, partial word counts too
  ASSERT_TRUE(device_->Write(a, host.data(), bytes).ok());
  uint64_t changed = 0;
  ASSERT_TRUE(tools_->Hash(a, 0, bytes, &changed).ok());
  EXPECT_NE(changed, ha);
}

INSTANTIATE_TEST_SUITE_P(OpenCL, DeviceTools_, ::testing::Values("opencl"));
INSTANTIATE_TEST_SUITE_P(Cuda, DeviceTools_, ::testing::Values("cuda"));

}  // namespace
}  // namespace kf
