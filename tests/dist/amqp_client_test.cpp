// The AMQP transport against a real RabbitMQ on loopback (tests/dist/local_broker.hpp): one
// broker for the suite, a queue of its own for each test. Skipped where rabbitmq-server is not
// installed (scripts/setup.sh --tests installs it).

#include "dist/amqp_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

#include "core/codec.hpp"
#include "dist/amqp_session.hpp"
#include "dist/queue_names.hpp"
#include "local_broker.hpp"

namespace kf {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class Amqp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (LocalBroker::Available()) broker_ = std::make_unique<test::LocalBroker>();
  }
  static void TearDownTestSuite() { broker_.reset(); }

  void SetUp() override {
    if (!broker_) GTEST_SKIP() << "rabbitmq-server is not installed (scripts/setup.sh --tests)";
  }

  static std::unique_ptr<AmqpClient> Client(int heartbeat_s = 30) {
    AmqpOptions options;
    options.heartbeat_s = heartbeat_s;
    return std::make_unique<AmqpClient>(broker_->Url(), options);
  }

  // A queue name of this test's own.
  static std::string Queue(std::string_view suffix = "") {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return "kf.test." + QueueSlug(info->name()) + std::string(suffix);
  }

  using LocalBroker = test::LocalBroker;
  static std::unique_ptr<test::LocalBroker> broker_;
};

std::unique_ptr<test::LocalBroker> Amqp::broker_;

RunReply AReply() {
  RunReply r;
  r.key = "e42";
  r.evaluation.status = Status::kIncorrect;
  r.evaluation.reason = "element 3 is 2.5, expected 2";
  r.listing = "ld.global.v4.f32";
  r.runner = 1;
  return r;
}

TEST_F(Amqp, ACodecValueMakesTheRoundTrip) {
  auto client = Client();
  client->Declare(QueueSpec(Queue()));
  const RunReply sent = AReply();
  client->Publish(Queue(), RunReplyToJson(sent).dump());
  client->Consume(Queue(), 2);
  std::optional<Delivery> d = client->Next(seconds(10));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->queue, Queue());
  EXPECT_FALSE(d->redelivered);
  EXPECT_EQ(d->delivery_count, 0);
  const RunReply back = RunReplyFromJson(nlohmann::json::parse(d->body));
  EXPECT_EQ(back.key, "e42");
  EXPECT_EQ(back.evaluation.reason, sent.evaluation.reason);
  EXPECT_EQ(RunReplyToJson(back), RunReplyToJson(sent));
  EXPECT_TRUE(client->Ack(d->tag));
  EXPECT_FALSE(client->Next(milliseconds(300)).has_value());
}

TEST_F(Amqp, APublishReturnsWhenConfirmedAndSaysWhenNoQueueTakesIt) {
  auto client = Client();
  client->Declare(QueueSpec(Queue()));
  std::vector<std::future<PublishOutcome>> outcomes;
  for (int i = 0; i < 100; ++i) outcomes.push_back(client->PublishAsync(Queue(), "{}"));
  for (auto& o : outcomes) EXPECT_EQ(o.get(), PublishOutcome::kConfirmed);
  EXPECT_EQ(client->PublishAsync(Queue(".missing"), "{}").get(), PublishOutcome::kUnroutable);
  EXPECT_THROW(client->Publish(Queue(".missing"), "{}"), AmqpError);
  // What was confirmed is there.
  client->Consume(Queue(), 200);
  int received = 0;
  while (std::optional<Delivery> d = client->Next(seconds(2))) {
    ++received;
    client->Ack(d->tag);
    if (received == 100) break;
  }
  EXPECT_EQ(received, 100);
}

TEST_F(Amqp, AJobNotAckedByAConsumerThatLeavesIsRedelivered) {
  auto publisher = Client();
  publisher->Declare(QueueSpec(Queue()));
  publisher->Publish(Queue(), R"({"job":1})");
  {
    auto worker = Client();
    worker->Consume(Queue(), 1);
    std::optional<Delivery> d = worker->Next(seconds(10));
    ASSERT_TRUE(d.has_value());
    EXPECT_FALSE(d->redelivered);
  }  // gone without an ack
  auto second = Client();
  second->Consume(Queue(), 1);
  std::optional<Delivery> again = second->Next(seconds(10));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->body, R"({"job":1})");
  EXPECT_TRUE(again->redelivered);
  EXPECT_EQ(again->delivery_count, 1);
  EXPECT_TRUE(second->Ack(again->tag));
}

TEST_F(Amqp, AJobPastItsDeliveryLimitIsDeadLettered) {
  const std::string dead = Queue(".dead");
  auto coordinator = Client();
  coordinator->Declare(QueueSpec(dead));
  coordinator->Declare(QueueSpec(Queue(), 2, dead));
  coordinator->Publish(Queue(), R"({"poison":true})");
  coordinator->Consume(dead, 10);
  int deliveries = 0;
  std::optional<Delivery> letter;
  while (deliveries < 10 && !letter) {
    {
      auto worker = Client();  // takes the job and dies with it
      worker->Consume(Queue(), 1);
      if (std::optional<Delivery> d = worker->Next(seconds(5))) {
        EXPECT_EQ(d->delivery_count, deliveries);
        ++deliveries;
      }
    }
    letter = coordinator->Next(milliseconds(500));
  }
  ASSERT_TRUE(letter.has_value()) << "not dead-lettered after " << deliveries << " deliveries";
  EXPECT_EQ(deliveries, 3);  // the limit is on redeliveries: the first and two more
  EXPECT_EQ(letter->queue, dead);
  EXPECT_EQ(letter->body, R"({"poison":true})");
  EXPECT_TRUE(coordinator->Ack(letter->tag));
  // And it is not in the job queue any more.
  auto worker = Client();
  worker->Consume(Queue(), 1);
  EXPECT_FALSE(worker->Next(seconds(1)).has_value());
}

TEST_F(Amqp, StoppingToConsumeGivesBackWhatWasNotTaken) {
  auto publisher = Client();
  publisher->Declare(QueueSpec(Queue()));
  for (int i = 0; i < 3; ++i) publisher->Publish(Queue(), std::to_string(i));
  auto worker = Client();
  worker->Consume(Queue(), 2);  // one running, one sent ahead
  std::optional<Delivery> running = worker->Next(seconds(10));
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->body, "0");
  std::this_thread::sleep_for(milliseconds(300));  // the one sent ahead has arrived
  worker->StopConsuming();
  EXPECT_FALSE(worker->Next(seconds(1)).has_value());
  EXPECT_TRUE(worker->Ack(running->tag));  // the in-flight job finishes
  worker->Close();
  auto other = Client();
  other->Consume(Queue(), 10);
  std::map<std::string, int64_t> rest;  // body → delivery count
  while (std::optional<Delivery> d = other->Next(seconds(2))) {
    rest[d->body] = d->delivery_count;
    other->Ack(d->tag);
    if (rest.size() == 2) break;
  }
  // A quorum queue counts the drain's requeue of the one sent ahead as a delivery.
  EXPECT_EQ(rest, (std::map<std::string, int64_t>{{"1", 1}, {"2", 0}}));
  EXPECT_FALSE(other->Next(milliseconds(500)).has_value());  // "0" was acked
}

TEST_F(Amqp, TheClientGoesOnAfterTheBrokerRestarts) {
  auto publisher = Client();
  auto consumer = Client();
  publisher->Declare(QueueSpec(Queue()));
  consumer->Consume(Queue(), 2);
  publisher->Publish(Queue(), "before");
  std::optional<Delivery> first = consumer->Next(seconds(10));
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(consumer->Ack(first->tag));
  publisher->Publish(Queue(), "unacked");
  std::optional<Delivery> unacked = consumer->Next(seconds(10));
  ASSERT_TRUE(unacked.has_value());

  broker_->Stop();
  broker_->Start();

  publisher->Publish(Queue(), "after");  // waits for the reconnection and the confirm
  EXPECT_GE(publisher->Reconnections(), 1);
  EXPECT_FALSE(consumer->Ack(unacked->tag));  // its connection is gone: stale
  std::vector<std::string> got;
  while (std::optional<Delivery> d = consumer->Next(seconds(15))) {
    got.push_back(d->body);
    EXPECT_TRUE(consumer->Ack(d->tag));
    if (got.size() == 2) break;
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"after", "unacked"}));
  EXPECT_GE(consumer->Reconnections(), 1);
  EXPECT_TRUE(consumer->Connected());
}

// The control for the next test: with a 2 s heartbeat, a connection that nobody reads or writes
// for a few intervals is lost (rabbitmq-c notices the broker's missing heartbeats at its next
// read; the broker, ours).
TEST_F(Amqp, AConnectionNobodyServesMissesItsHeartbeatsAndIsLost) {
  AmqpSession silent(broker_->Url(), 2);
  silent.Declare(QueueSpec(Queue()));
  std::this_thread::sleep_for(seconds(7));
  try {
    silent.Declare(QueueSpec(Queue()));
    while (!silent.ReadEvent()) std::this_thread::sleep_for(milliseconds(10));
    FAIL() << "the silent connection still works";
  } catch (const AmqpLost& e) {
    std::printf("lost, as expected: %s\n", e.what());
  }
}

TEST_F(Amqp, AConsumerBusyForSeveralHeartbeatIntervalsStaysConnected) {
  auto publisher = Client();
  publisher->Declare(QueueSpec(Queue()));
  publisher->Publish(Queue(), "long job");
  auto worker = Client(/*heartbeat_s=*/2);
  worker->Consume(Queue(), 1);
  std::optional<Delivery> job = worker->Next(seconds(10));
  ASSERT_TRUE(job.has_value());
  std::this_thread::sleep_for(seconds(7));  // "on the GPU": no call into the client
  EXPECT_TRUE(worker->Connected());
  EXPECT_EQ(worker->Reconnections(), 0);
  EXPECT_TRUE(worker->Ack(job->tag));
  worker->Close();
  auto other = Client();
  other->Consume(Queue(), 1);
  EXPECT_FALSE(other->Next(seconds(1)).has_value()) << "the job came back: the ack was lost";
}

TEST_F(Amqp, AWrongPasswordFailsAtOnceAndIsNotShown) {
  AmqpUrl url = broker_->Url();
  url.password = "not-the-password-5b1f";
  AmqpOptions options;
  options.first_connect_timeout = seconds(5);
  const auto start = std::chrono::steady_clock::now();
  try {
    AmqpClient client(url, options);
    FAIL() << "connected with a wrong password";
  } catch (const AmqpError& e) {
    std::printf("refused, as expected: %s\n", e.what());
    EXPECT_EQ(std::string(e.what()).find("not-the-password"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(url.Redacted()), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(4)) << "it retried a refusal";
}

}  // namespace
}  // namespace kf
