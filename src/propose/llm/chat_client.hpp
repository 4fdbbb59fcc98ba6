#pragma once
// One client for OpenAI-compatible chat-completions servers (OpenAI, vLLM, llama.cpp, SGLang,
// LiteLLM...): a blocking Complete, safe to call from many threads, that shares one concurrency
// limit and one tokens-per-minute budget among its callers, retries what may pass on a second try
// (429, 5xx, a dropped or late connection) with jittered back-off, and turns every failure into a
// ChatReply with the reason. The API key goes into the Authorization header and nowhere else.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kf {

struct ChatMessage {
  std::string role;  // "system" | "user" | "assistant"
  std::string content;
};

struct ModelSettings {
  std::string name;  // label in statistics and logs ("" -> the model id)
  // e.g. "http://127.0.0.1:8000/v1": requests go to base_url + "/chat/completions".
  std::string base_url;
  std::string model;
  std::string api_key;       // "Authorization: Bearer KEY" when non-empty; never in any text out
  double temperature = 0.7;  // < 0: not sent (for models that refuse one)
  int max_tokens = 4096;     // sent as "max_tokens" unless max_completion_tokens > 0
  int max_completion_tokens = 0;  // > 0: sent as "max_completion_tokens" instead (reasoning models)
  std::string reasoning_effort;   // "" = not sent
  double weight = 1;              // prior weight in an ensemble
  double price_in_per_mtok = 0;   // USD per million prompt tokens
  double price_out_per_mtok = 0;  // USD per million completion tokens
  int context_tokens = 32768;     // the model's context window

  std::string Label() const { return name.empty() ? model : name; }
  double Cost(int prompt_tokens, int completion_tokens) const;
};

struct ClientLimits {
  double timeout_s = 300;        // per attempt; connecting may take min(timeout_s, 10 s) of it
  int max_retries = 4;           // further attempts after the first
  double backoff_base_s = 1;     // retry k waits uniform(0, min(backoff_max_s, base * 2^k))
  double backoff_max_s = 60;     // ("full jitter", so that many callers do not retry in step)
  int concurrency = 8;           // requests at once, shared by every caller of this client
  double tokens_per_minute = 0;  // 0 = no limit; else a token bucket of this capacity, charged
                                 // (prompt characters / 4) + the reply's max tokens per attempt
};

struct ChatReply {
  bool ok = false;
  std::string content;        // choices[0].message.content
  std::string finish_reason;  // "stop", "length", ...
  int prompt_tokens = 0;      // usage; estimated as characters / 4 when the server sends none
  int completion_tokens = 0;
  int attempts = 0;
  int http_status = 0;  // of the last attempt (0: no HTTP answer)
  double seconds = 0;   // wall time, waits included
  std::string error;    // why not ok, after retries: "HTTP 401: <body excerpt>",
                        // "no reply within 30 s", "cannot connect to http://...: <reason>"
};

class ChatClient {
 public:
  explicit ChatClient(ClientLimits limits, uint64_t seed = 1);
  ~ChatClient();
  ChatClient(const ChatClient&) = delete;
  ChatClient& operator=(const ChatClient&) = delete;

  // Blocking and thread-safe. Waits for the token budget and a concurrency slot, then posts;
  // retries 429, 5xx and transport failures (connect, time-out, reset) up to max_retries times,
  // waiting at least a Retry-After header's time (seconds or an HTTP date; at most
  // 2 * backoff_max_s). Other 4xx answers and unusable bodies are final. Never throws for a bad
  // answer.
  ChatReply Complete(const ModelSettings& model, const std::vector<ChatMessage>& messages);

  const ClientLimits& limits() const { return limits_; }
  int max_in_flight() const;  // the most requests that were ever out at once

 private:
  struct Shared;  // the slots, the token bucket and the back-off randomness
  ClientLimits limits_;
  std::unique_ptr<Shared> shared_;
};

}  // namespace kf
