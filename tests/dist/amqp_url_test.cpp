// Broker URLs and queue names: no broker needed.

#include "dist/amqp_url.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <stdexcept>

#include "dist/queue_names.hpp"

namespace kf {
namespace {

TEST(AmqpUrl, PartsAndDefaults) {
  unsetenv(kAmqpPasswordEnv);
  const AmqpUrl u = ParseAmqpUrl("amqp://worker@broker.lan:5673/kf%2Fprod");
  EXPECT_EQ(u.user, "worker");
  EXPECT_EQ(u.host, "broker.lan");
  EXPECT_EQ(u.port, 5673);
  EXPECT_EQ(u.vhost, "kf/prod");
  EXPECT_EQ(u.password, "");
  const AmqpUrl d = ParseAmqpUrl("amqp://localhost");
  EXPECT_EQ(d.port, 5672);
  EXPECT_EQ(d.vhost, "/");
  EXPECT_EQ(d.user, "guest");
  EXPECT_THROW(ParseAmqpUrl("http://localhost"), std::invalid_argument);
  EXPECT_THROW(ParseAmqpUrl("amqp://u@host:99999/"), std::invalid_argument);
  EXPECT_THROW(ParseAmqpUrl("amqp:///vhost"), std::invalid_argument);
}

TEST(AmqpUrl, ThePasswordComesFromTheEnvironmentAndIsNeverShown) {
  setenv(kAmqpPasswordEnv, "s3cret", 1);
  const AmqpUrl u = ParseAmqpUrl("amqp://worker@127.0.0.1:5672/");
  EXPECT_EQ(u.password, "s3cret");
  EXPECT_EQ(u.Redacted(), "amqp://worker@127.0.0.1:5672/%2F");
  const AmqpUrl inline_password = ParseAmqpUrl("amqp://worker:hunter2@127.0.0.1/");
  EXPECT_EQ(inline_password.password, "hunter2");  // the URL's wins
  EXPECT_EQ(inline_password.Redacted().find("hunter2"), std::string::npos);
  EXPECT_EQ(RedactAmqpUrl("amqp://worker:hunter2@127.0.0.1/"), "amqp://worker:***@127.0.0.1/");
  try {
    ParseAmqpUrl("amqp://worker:hunter2@127.0.0.1:0/");
    FAIL() << "port 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
  unsetenv(kAmqpPasswordEnv);
}

TEST(QueueNames, OneQueuePerJobKindAndDeviceKind) {
  DeviceInfo h100;
  h100.backend = "cuda";
  h100.arch = "sm_90";
  h100.name = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(RunQueueName(h100), "kf.run.cuda.sm-90.nvidia-h100-80gb-hbm3");
  EXPECT_EQ(WorkerQueueName(RunQueueName(h100), "gpu1:4242:run"),
            "kf.run.cuda.sm-90.nvidia-h100-80gb-hbm3.w.gpu1-4242-run");
  DeviceInfo pocl;
  pocl.backend = "opencl";
  pocl.arch = "OpenCL C 1.2";
  pocl.name = "cpu-haswell-AMD EPYC 7B13";
  EXPECT_EQ(RunQueueName(pocl), "kf.run.opencl.opencl-c-1-2.cpu-haswell-amd-epyc-7b13");
  EXPECT_EQ(BuildQueueName("cuda"), "kf.build.cuda");
  EXPECT_EQ(ResultsQueueName("run.7"), "kf.results.run-7");
  EXPECT_EQ(QueueSlug("..."), "unnamed");
}

}  // namespace
}  // namespace kf
