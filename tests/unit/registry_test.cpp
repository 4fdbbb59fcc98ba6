#include "backend/registry.hpp"

#include <gtest/gtest.h>

namespace kf {
namespace {

TEST(Registry, ListsBackendsAndExplainsMissingOnes) {
  auto backends = MakeBackends();
  ASSERT_FALSE(backends.empty());
  DeviceListing listing = ListDevices(backends);
  // Every backend either lists devices or says why it has none.
  for (auto& b : backends) {
    bool listed = false, noted = false;
    for (const auto& d : listing.devices) listed = listed || d.backend == b->name();
    for (const auto& n : listing.notes)
      noted = noted || n.rfind(std::string(b->name()) + ":", 0) == 0;
    EXPECT_TRUE(listed || noted) << b->name();
  }
  for (const auto& d : listing.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.max_work_group_size, 0);
    EXPECT_GT(d.global_mem_bytes, 0);
  }
}

TEST(Registry, UnknownSelectorListsWhatWasFound) {
  auto backends = MakeBackends();
  std::string error;
  EXPECT_EQ(OpenDevice(backends, "nosuchbackend-or-device-name", &error), nullptr);
  EXPECT_NE(error.find("no device matches 'nosuchbackend-or-device-name'"), std::string::npos)
      << error;
  EXPECT_EQ(OpenDevice(backends, "opencl:999", &error), nullptr);
}

}  // namespace
}  // namespace kf
