#include "propose/llm/chat_client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string_view>
#include <thread>

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr size_t kMaxReplyBytes = size_t{64} << 20;  // far above any chat reply; bounds memory
constexpr size_t kExcerptBytes = 300;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void SleepSeconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// Invalid UTF-8 (a proxy's Latin-1 error page) becomes U+FFFD, so that the text can go into JSON.
std::string ValidUtf8(const std::string& text) {
  return json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace))
      .get<std::string>();
}

// At most kExcerptBytes of `text` on one line, in valid UTF-8.
std::string Excerpt(std::string_view text) {
  std::string line;
  for (char c : text) line += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  size_t first = line.find_first_not_of(' ');
  if (first == std::string::npos) return "(empty body)";
  line.erase(0, first);
  line.erase(line.find_last_not_of(' ') + 1);
  if (line.size() <= kExcerptBytes) return ValidUtf8(line);
  size_t cut = kExcerptBytes;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return ValidUtf8(line.substr(0, cut)) + "...";
}

// Servers echo a rejected key in their error message (OpenAI does, partly masked).
std::string Redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
    text.replace(at, secret.size(), "[api key]");
  }
  return text;
}

std::string Endpoint(std::string base_url) {
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  return base_url + "/chat/completions";
}

// A proxy from the environment must not carry requests to a server on this machine; the user's
// own no_proxy list is kept, since setting the option replaces it.
const std::string& NoProxyList() {
  static const std::string list = [] {
    const char* env = std::getenv("no_proxy");
    if (!env || !*env) env = std::getenv("NO_PROXY");
    std::string user = env ? env : "";
    if (user == "*") return user;
    return "localhost,127.0.0.1,::1" + (user.empty() ? "" : "," + user);
  }();
  return list;
}

int EstimatedTokens(size_t characters) {
  return static_cast<int>(characters / 4);
}

size_t PromptCharacters(const std::vector<ChatMessage>& messages) {
  size_t n = 0;
  for (const ChatMessage& m : messages) n += m.content.size();
  return n;
}

std::string RequestBody(const ModelSettings& model, const std::vector<ChatMessage>& messages) {
  json body = {{"model", model.model}, {"messages", json::array()}, {"stream", false}};
  for (const ChatMessage& m : messages) {
    body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  }
  if (model.temperature >= 0) body["temperature"] = model.temperature;
  if (model.max_completion_tokens > 0) {
    body["max_completion_tokens"] = model.max_completion_tokens;
  } else {
    body["max_tokens"] = model.max_tokens;
  }
  if (!model.reasoning_effort.empty()) body["reasoning_effort"] = model.reasoning_effort;
  // Prompts quote compiler output, which need not be valid UTF-8: replace, never throw.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

// What one HTTP exchange gave.
struct Exchange {
  CURLcode code = CURLE_OK;
  long status = 0;
  bool sent = false;  // the request went out: a time-out now is the server's, not the network's
  bool too_big = false;
  std::string body;
  std::string retry_after;  // the header's value; "" when absent
  std::string curl_error;
};

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  if (ex->body.size() + size * count > kMaxReplyBytes) {
    ex->too_big = true;
    return 0;  // aborts the transfer
  }
  ex->body.append(data, size * count);
  return size * count;
}

size_t ReadHeader(char* data, size_t size, size_t count, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) ex->retry_after.clear();  // a new response (after a 100)
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size() &&
      std::equal(kName.begin(), kName.end(), line.begin(),
                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    std::string_view value = line.substr(kName.size());
    size_t first = value.find_first_not_of(" \t");
    size_t last = value.find_last_not_of(" \t\r\n");
    if (first != std::string_view::npos) ex->retry_after = value.substr(first, last - first + 1);
  }
  return size * count;
}

Exchange Post(const std::string& url, const std::string& body, const std::string& api_key,
              double timeout_s) {
  Exchange ex;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    ex.code = CURLE_FAILED_INIT;
    ex.curl_error = "cannot create a curl handle";
    return ex;
  }
  curl_slist* list = curl_slist_append(nullptr, "Content-Type: application/json");
  list = curl_slist_append(list, "Expect:");  // no 100-continue round trip for long prompts
  if (!api_key.empty()) {
    list = curl_slist_append(list, ("Authorization: Bearer " + api_key).c_str());
  }
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(list, curl_slist_free_all);
  char error[CURL_ERROR_SIZE] = "";
  auto timeout_ms = static_cast<long>(std::max(1.0, timeout_s * 1000));
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85 replaced the bit mask by a list
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, ReadHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // signals for time-outs are not thread-safe
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeout_ms, 10000L));
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(h, CURLOPT_NOPROXY, NoProxyList().c_str());
  ex.code = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &ex.status);
  long request_bytes = 0;
  curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &request_bytes);
  ex.sent = request_bytes > 0;
  ex.curl_error = *error ? error : curl_easy_strerror(ex.code);
  return ex;
}

// Seconds to wait before the next attempt, from a Retry-After value (delta seconds or an HTTP
// date); -1 when there is none or it cannot be read.
double RetryAfterSeconds(const std::string& value) {
  if (value.empty()) return -1;
  char* end = nullptr;
  double seconds = std::strtod(value.c_str(), &end);
  if (end != value.c_str() && *end == '\0') return std::max(0.0, seconds);
  time_t when = curl_getdate(value.c_str(), nullptr);
  if (when < 0) return -1;
  return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

// How one attempt ended.
struct Verdict {
  std::string error;  // "" when the reply is usable
  bool retry = false;
  double retry_after_s = -1;
};

bool IsTransient(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
  }
}

Verdict TransportFailure(const Exchange& ex, const std::string& url, double timeout_s) {
  Verdict v;
  v.retry = IsTransient(ex.code);
  if (ex.too_big) {
    v.error = fmt::format("the reply is over {} MiB", kMaxReplyBytes >> 20);
  } else if (ex.code == CURLE_OPERATION_TIMEDOUT && ex.sent) {
    v.error = fmt::format("no reply within {:g} s", timeout_s);
  } else if (ex.code == CURLE_COULDNT_CONNECT || ex.code == CURLE_COULDNT_RESOLVE_HOST ||
             ex.code == CURLE_OPERATION_TIMEDOUT) {
    v.error = fmt::format("cannot connect to {}: {}", url, ex.curl_error);
  } else {
    v.error = fmt::format("request to {} failed: {}", url, ex.curl_error);
  }
  return v;
}

// The error message a server put in its body ({"error": {"message": ...}}), else the body.
std::string ServerSays(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_string()) return e.get<std::string>();
    if (e.is_object() && e.contains("message") && e["message"].is_string()) {
      return e["message"].get<std::string>();
    }
  }
  return body;
}

const json* Member(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

// Fills the reply from a 2xx body; returns why it cannot, or "".
std::string ReadCompletion(const std::string& body, ChatReply& reply) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return "the reply is not a JSON object: " + Excerpt(body);
  const json* choices = Member(j, "choices");
  const json* message = nullptr;
  if (choices && choices->is_array() && !choices->empty())
    message = Member((*choices)[0], "message");
  const json* content = message ? Member(*message, "content") : nullptr;
  if (!content || !content->is_string()) {
    std::string why = "the reply has no choices[0].message.content";
    return Member(j, "error") ? why + " (error: " + Excerpt(ServerSays(body)) + ")" : why;
  }
  reply.content = content->get<std::string>();
  const json* finish = Member((*choices)[0], "finish_reason");
  reply.finish_reason = finish && finish->is_string() ? finish->get<std::string>() : "";
  const json* usage = Member(j, "usage");
  const json* prompt = usage ? Member(*usage, "prompt_tokens") : nullptr;
  const json* completion = usage ? Member(*usage, "completion_tokens") : nullptr;
  // -1: not sent, estimated later from lengths.
  reply.prompt_tokens = prompt && prompt->is_number_integer() ? prompt->get<int>() : -1;
  reply.completion_tokens =
      completion && completion->is_number_integer() ? completion->get<int>() : -1;
  return "";
}

Verdict Judge(const Exchange& ex, const std::string& url, const std::string& api_key,
              double timeout_s, ChatReply& reply) {
  reply.http_status = static_cast<int>(ex.status);
  if (ex.code != CURLE_OK) return TransportFailure(ex, url, timeout_s);
  Verdict v;
  if (ex.status >= 200 && ex.status < 300) {
    v.error = ReadCompletion(ex.body, reply);
    return v;
  }
  v.retry = ex.status == 429 || ex.status >= 500;
  v.retry_after_s = RetryAfterSeconds(ex.retry_after);
  v.error = fmt::format("HTTP {}: {}", ex.status, Excerpt(Redact(ServerSays(ex.body), api_key)));
  return v;
}

}  // namespace

double ModelSettings::Cost(int prompt_tokens, int completion_tokens) const {
  return (prompt_tokens * price_in_per_mtok + completion_tokens * price_out_per_mtok) / 1e6;
}

struct ChatClient::Shared {
  std::mutex slot_mutex;
  std::condition_variable slot_freed;
  int in_flight = 0;
  int max_in_flight = 0;

  std::mutex bucket_mutex;
  double bucket_level = 0;  // tokens; negative while callers wait for what they reserved
  Clock::time_point bucket_time = Clock::now();

  std::mutex rng_mutex;
  std::mt19937_64 rng;

  explicit Shared(uint64_t seed) : rng(seed) {}

  void AcquireSlot(int limit) {
    std::unique_lock lock(slot_mutex);
    slot_freed.wait(lock, [&] { return in_flight < std::max(1, limit); });
    max_in_flight = std::max(max_in_flight, ++in_flight);
  }

  void ReleaseSlot() {
    {
      std::lock_guard lock(slot_mutex);
      --in_flight;
    }
    slot_freed.notify_one();
  }

  // Reserves `need` tokens at once and sleeps until the bucket has refilled the debt: callers are
  // served in arrival order, and one bigger than the bucket waits for a full bucket, then goes.
  void WaitForTokens(double need, double per_minute) {
    if (per_minute <= 0) return;
    double rate = per_minute / 60, wait = 0;
    {
      std::lock_guard lock(bucket_mutex);
      Clock::time_point now = Clock::now();
      double refill = std::chrono::duration<double>(now - bucket_time).count() * rate;
      bucket_level = std::min(per_minute, bucket_level + refill) - std::min(need, per_minute);
      bucket_time = now;
      if (bucket_level < 0) wait = -bucket_level / rate;
    }
    SleepSeconds(wait);
  }

  // Holds one concurrency slot for its lifetime.
  class Slot {
   public:
    Slot(Shared& shared, int limit) : shared_(shared) { shared_.AcquireSlot(limit); }
    ~Slot() { shared_.ReleaseSlot(); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    Shared& shared_;
  };

  double Uniform(double upper) {
    std::lock_guard lock(rng_mutex);
    return std::uniform_real_distribution<double>(0, upper)(rng);
  }
};

ChatClient::ChatClient(ClientLimits limits, uint64_t seed)
    : limits_(limits), shared_(std::make_unique<Shared>(seed)) {
  static std::once_flag curl_ready;
  std::call_once(curl_ready, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  shared_->bucket_level = limits_.tokens_per_minute;  // a fresh client may spend a minute's worth
}

ChatClient::~ChatClient() = default;

int ChatClient::max_in_flight() const {
  std::lock_guard lock(shared_->slot_mutex);
  return shared_->max_in_flight;
}

ChatReply ChatClient::Complete(const ModelSettings& model,
                               const std::vector<ChatMessage>& messages) {
  Clock::time_point start = Clock::now();
  ChatReply reply;
  if (model.base_url.empty()) {
    reply.error = fmt::format("no base URL for model {}", model.Label());
    return reply;
  }
  std::string url = Endpoint(model.base_url);
  std::string body = RequestBody(model, messages);
  int prompt_estimate = EstimatedTokens(PromptCharacters(messages));
  int reply_limit =
      model.max_completion_tokens > 0 ? model.max_completion_tokens : model.max_tokens;
  for (int attempt = 0;; ++attempt) {
    shared_->WaitForTokens(prompt_estimate + reply_limit, limits_.tokens_per_minute);
    Verdict verdict;
    {
      Shared::Slot slot(*shared_, limits_.concurrency);
      Exchange ex = Post(url, body, model.api_key, limits_.timeout_s);
      verdict = Judge(ex, url, model.api_key, limits_.timeout_s, reply);
    }
    reply.attempts = attempt + 1;
    reply.ok = verdict.error.empty();
    reply.error = verdict.error;
    if (reply.ok || !verdict.retry || attempt >= limits_.max_retries) break;
    double jitter = shared_->Uniform(
        std::min(limits_.backoff_max_s, std::ldexp(limits_.backoff_base_s, attempt)));
    double asked = std::min(verdict.retry_after_s, 2 * limits_.backoff_max_s);
    SleepSeconds(std::max(jitter, asked));
  }
  if (reply.ok) {
    if (reply.prompt_tokens < 0) reply.prompt_tokens = prompt_estimate;
    if (reply.completion_tokens < 0)
      reply.completion_tokens = EstimatedTokens(reply.content.size());
  } else {
    if (reply.attempts > 1) reply.error += fmt::format(" (after {} attempts)", reply.attempts);
    reply.error = Redact(reply.error, model.api_key);
  }
  reply.seconds = SecondsSince(start);
  return reply;
}

}  // namespace kf
