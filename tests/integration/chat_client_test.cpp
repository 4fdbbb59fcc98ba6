// The chat-completions client against tests/servers/chat_server.py on loopback: a reply and its
// usage, the request body, the key sent yet never in an error, retries of 429 (honouring
// Retry-After), 5xx, time-outs and refused connections, the limits on attempts, concurrency and
// tokens per minute, and malformed bodies that are final.
#include "propose/llm/chat_client.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "chat_server_process.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The scripted server, in a folder of its own for the test that runs it.
class ChatServer : public testing::ScriptedChatServer {
 public:
  explicit ChatServer(const json& script)
      : ScriptedChatServer(
            script, (fs::temp_directory_path() /
                     fmt::format("kf-chat-{}-{}", getpid(),
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                        .string()) {}
  std::string url() const { return base_url(); }
};

ClientLimits FastLimits() {
  ClientLimits limits;
  limits.timeout_s = 5;
  limits.backoff_base_s = 0.05;
  limits.backoff_max_s = 1;
  return limits;
}

ModelSettings Model(const ChatServer& server) {
  ModelSettings m;
  m.base_url = server.url() + "/";  // the trailing '/' must not matter
  m.model = "test-model";
  m.max_tokens = 64;
  return m;
}

std::vector<ChatMessage> Ask(const std::string& text) {
  return {{"system", "You write kernels."}, {"user", text}};
}

TEST(ChatClient, ReturnsContentAndUsage) {
  ChatServer server(json{{"replies",
                          {{{"content", "__global__ void k() {}"},
                            {"finish_reason", "length"},
                            {"usage", {{"prompt_tokens", 12}, {"completion_tokens", 7}}}},
                           {{"body", R"({"choices": [{"message": {"content": "12345678"}}]})"}}}}});
  ChatClient client(FastLimits());
  ChatReply r = client.Complete(Model(server), Ask("a kernel please"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "__global__ void k() {}");
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_EQ(r.prompt_tokens, 12);
  EXPECT_EQ(r.completion_tokens, 7);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.error, "");

  // Without usage in the answer the tokens are estimated from the lengths.
  ChatReply estimated = client.Complete(Model(server), Ask("0123456789abcdef"));
  ASSERT_TRUE(estimated.ok) << estimated.error;
  EXPECT_EQ(estimated.content, "12345678");
  EXPECT_EQ(estimated.prompt_tokens, (18 + 16) / 4);
  EXPECT_EQ(estimated.completion_tokens, 2);
}

TEST(ChatClient, SendsTheRequestFields) {
  ChatServer server(json{{"default", {{"content", "ok"}}}});
  ChatClient client(FastLimits());
  ModelSettings plain = Model(server);
  plain.temperature = 0.25;
  ASSERT_TRUE(client.Complete(plain, Ask("one")).ok);
  ModelSettings reasoning = Model(server);
  reasoning.temperature = -1;
  reasoning.max_completion_tokens = 900;
  reasoning.reasoning_effort = "high";
  ASSERT_TRUE(client.Complete(reasoning, Ask("two")).ok);

  std::vector<json> log = server.Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["model"], "test-model");
  EXPECT_EQ(log[0]["messages"][0]["role"], "system");
  EXPECT_EQ(log[0]["messages"][1]["content"], "one");
  EXPECT_EQ(log[0]["params"]["temperature"], 0.25);
  EXPECT_EQ(log[0]["params"]["max_tokens"], 64);
  EXPECT_EQ(log[0]["params"]["stream"], false);
  EXPECT_FALSE(log[0]["params"].contains("reasoning_effort"));
  EXPECT_FALSE(log[1]["params"].contains("temperature"));
  EXPECT_FALSE(log[1]["params"].contains("max_tokens"));
  EXPECT_EQ(log[1]["params"]["max_completion_tokens"], 900);
  EXPECT_EQ(log[1]["params"]["reasoning_effort"], "high");
}

TEST(ChatClient, SendsTheKeyAndNeverShowsIt) {
  ChatServer server(json{{"api_key", "sk-right-0123456789"}, {"default", {{"content", "ok"}}}});
  ChatClient client(FastLimits());
  ModelSettings m = Model(server);
  m.api_key = "sk-right-0123456789";
  ChatReply good = client.Complete(m, Ask("hello"));
  EXPECT_TRUE(good.ok) << good.error;

  // The server echoes a rejected key in its message, as OpenAI does.
  m.api_key = "sk-wrong-9876543210";
  ChatReply bad = client.Complete(m, Ask("hello"));
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.http_status, 401);
  EXPECT_EQ(bad.attempts, 1) << "a 401 is not retried";
  EXPECT_TRUE(bad.error.starts_with("HTTP 401: ")) << bad.error;
  EXPECT_EQ(bad.error.find("sk-wrong"), std::string::npos) << bad.error;

  std::vector<json> log = server.Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["auth_ok"], true);
  EXPECT_EQ(log[1]["auth_ok"], false);
}

TEST(ChatClient, WaitsForRetryAfterOn429) {
  ChatServer server(
      json{{"replies", {{{"status", 429}, {"retry_after", 1}}, {{"content", "after the wait"}}}}});
  ChatClient client(FastLimits());
  ChatReply r = client.Complete(Model(server), Ask("x"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "after the wait");
  EXPECT_EQ(r.attempts, 2);
  EXPECT_GE(r.seconds, 1.0);
  EXPECT_LT(r.seconds, 5.0);
}

TEST(ChatClient, WaitsForARetryAfterDate) {
  // Far enough ahead that the date is still ahead once the server has started on a loaded machine.
  std::time_t when = std::time(nullptr) + 5;
  char date[64];
  std::strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", std::gmtime(&when));
  ChatServer server(
      json{{"replies", {{{"status", 503}, {"retry_after", date}}, {{"content", "ok"}}}}});
  ChatClient client(FastLimits());
  ChatReply r = client.Complete(Model(server), Ask("x"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_GE(r.seconds, 1.0);  // the date has whole seconds
  EXPECT_LT(r.seconds, 8.0);
}

TEST(ChatClient, RetriesServerErrors) {
  ChatServer server(
      json{{"replies", {{{"status", 500}}, {{"status", 503}}, {{"content", "third time"}}}}});
  ClientLimits limits = FastLimits();
  limits.max_retries = 3;
  ChatClient client(limits);
  ChatReply r = client.Complete(Model(server), Ask("x"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "third time");
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(server.Log().size(), 3u);
}

TEST(ChatClient, StopsAfterMaxRetries) {
  ChatServer server(json{{"default", {{"status", 500}}}});
  ClientLimits limits = FastLimits();
  limits.max_retries = 3;
  ChatClient client(limits);
  ChatReply r = client.Complete(Model(server), Ask("x"));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 4);
  EXPECT_EQ(r.http_status, 500);
  EXPECT_TRUE(r.error.starts_with("HTTP 500: scripted error")) << r.error;
  EXPECT_EQ(server.Log().size(), 4u);
}

TEST(ChatClient, RetriesALateReply) {
  ChatServer server(json{
      {"rules",
       {{{"when_contains", "always slow"}, {"reply", {{"content", "late"}, {"delay_s", 2.5}}}}}},
      {"replies", {{{"content", "late"}, {"delay_s", 2.5}}, {{"content", "on time"}}}}});
  ClientLimits limits = FastLimits();
  limits.timeout_s = 1;
  limits.max_retries = 0;
  ChatReply late = ChatClient(limits).Complete(Model(server), Ask("always slow"));
  EXPECT_FALSE(late.ok);
  EXPECT_EQ(late.attempts, 1);
  EXPECT_TRUE(late.error.starts_with("no reply within 1 s")) << late.error;

  limits.max_retries = 2;
  ChatReply retried = ChatClient(limits).Complete(Model(server), Ask("x"));
  ASSERT_TRUE(retried.ok) << retried.error;
  EXPECT_EQ(retried.content, "on time");
  EXPECT_EQ(retried.attempts, 2);
}

TEST(ChatClient, RetriesARefusedConnection) {
  // A port that was free a moment ago: nothing listens there.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  close(fd);
  ModelSettings m;
  m.base_url = fmt::format("http://127.0.0.1:{}/v1", ntohs(addr.sin_port));
  m.model = "nobody";
  m.api_key = "sk-never-shown-42";
  ClientLimits limits = FastLimits();
  limits.max_retries = 1;
  ChatReply r = ChatClient(limits).Complete(m, Ask("x"));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(r.http_status, 0);
  EXPECT_TRUE(r.error.starts_with("cannot connect to " + m.base_url + "/chat/completions"))
      << r.error;
  EXPECT_EQ(r.error.find("sk-never"), std::string::npos);
}

TEST(ChatClient, HoldsTheConcurrencyLimit) {
  ChatServer server(json{{"default", {{"content", "ok"}, {"delay_s", 0.5}}}});
  ClientLimits limits = FastLimits();
  limits.concurrency = 2;
  ChatClient client(limits);
  ModelSettings m = Model(server);
  std::vector<std::thread> threads;
  std::vector<ChatReply> replies(6);
  for (size_t i = 0; i < replies.size(); ++i) {
    threads.emplace_back([&, i] { replies[i] = client.Complete(m, Ask(fmt::format("#{}", i))); });
  }
  for (std::thread& t : threads) t.join();
  for (const ChatReply& r : replies) EXPECT_TRUE(r.ok) << r.error;
  std::vector<json> log = server.Log();
  ASSERT_EQ(log.size(), 6u);
  int most = 0;
  for (const json& entry : log) most = std::max(most, entry["concurrent"].get<int>());
  EXPECT_EQ(most, 2);
  EXPECT_EQ(client.max_in_flight(), 2);
}

TEST(ChatClient, MalformedBodiesAreFinal) {
  ChatServer server(json{{"replies",
                          {{{"body", "this is not JSON"}},
                           {{"body", R"({"choices": []})"}},
                           {{"body", R"({"error": {"message": "overloaded"}})"}}}},
                         {"default", {{"content", "never reached by a retry"}}}});
  ClientLimits limits = FastLimits();
  limits.max_retries = 3;
  ChatClient client(limits);
  ChatReply not_json = client.Complete(Model(server), Ask("x"));
  EXPECT_FALSE(not_json.ok);
  EXPECT_EQ(not_json.attempts, 1);
  EXPECT_EQ(not_json.http_status, 200);
  EXPECT_EQ(not_json.error, "the reply is not a JSON object: this is not JSON");
  ChatReply no_choice = client.Complete(Model(server), Ask("x"));
  EXPECT_EQ(no_choice.error, "the reply has no choices[0].message.content");
  ChatReply error = client.Complete(Model(server), Ask("x"));
  EXPECT_EQ(error.error, "the reply has no choices[0].message.content (error: overloaded)");
  EXPECT_EQ(server.Log().size(), 3u);
}

TEST(ChatClient, TokenBudgetDelaysTheSecondRequest) {
  ChatServer server(json{{"default", {{"content", "ok"}}}});
  ClientLimits limits = FastLimits();
  // 100 tokens a second. Each request is charged 400 / 4 + 3000 = 3100 tokens: the first goes at
  // once from the full bucket, the second waits for the 200 missing, about 2 s.
  limits.tokens_per_minute = 6000;
  ChatClient client(limits);
  ModelSettings m = Model(server);
  m.max_tokens = 3000;
  std::vector<ChatMessage> prompt = {{"user", std::string(400, 'k')}};
  ChatReply first = client.Complete(m, prompt);
  ChatReply second = client.Complete(m, prompt);
  ASSERT_TRUE(first.ok && second.ok) << first.error << second.error;
  EXPECT_LT(first.seconds, 1.0);
  EXPECT_GE(second.seconds, 1.5);
  EXPECT_LT(second.seconds, 6.0);
  std::vector<json> log = server.Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_GE(log[1]["start"].get<double>() - log[0]["start"].get<double>(), 1.5);
}

}  // namespace
}  // namespace kf
