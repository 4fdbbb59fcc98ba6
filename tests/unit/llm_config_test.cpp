#include "propose/llm/llm_config.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "core/input_error.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVariables[] = {"KFOUNDRY_LLM_BASE_URL", "KFOUNDRY_LLM_MODEL",
                                      "KFOUNDRY_LLM_API_KEY",  "OPENAI_BASE_URL",
                                      "OPENAI_API_KEY",        "KF_TEST_MODEL_KEY"};

// Starts each test with none of the variables above set, and puts back what was there.
class LlmConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      const char* v = std::getenv(name);
      saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
      unsetenv(name);
    }
  }

  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    if (!file_.empty()) fs::remove(file_);
  }

  std::string WriteModels(const std::string& text) {
    file_ = (fs::temp_directory_path() / fmt::format("kf-models-{}.toml", getpid())).string();
    std::ofstream(file_) << text;
    return file_;
  }

  // The message of the InputError that `load` throws; "" when it throws none.
  template <typename F>
  static std::string ErrorOf(F load) {
    try {
      load();
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  std::string file_;

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST_F(LlmConfig, FlagsComeBeforeOurVariablesBeforeOpenAis) {
  setenv("OPENAI_BASE_URL", "http://openai-compatible/v1", 1);
  setenv("OPENAI_API_KEY", "sk-openai", 1);
  setenv("KFOUNDRY_LLM_MODEL", "env-model", 1);
  std::vector<ModelSettings> m = ResolveModels({});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].model, "env-model");
  EXPECT_EQ(m[0].base_url, "http://openai-compatible/v1");
  EXPECT_EQ(m[0].api_key, "sk-openai");
  EXPECT_EQ(m[0].temperature, 0.7);

  setenv("KFOUNDRY_LLM_BASE_URL", "http://ours/v1", 1);
  setenv("KFOUNDRY_LLM_API_KEY", "sk-ours", 1);
  m = ResolveModels({});
  EXPECT_EQ(m[0].base_url, "http://ours/v1");
  EXPECT_EQ(m[0].api_key, "sk-ours");

  LlmFlags flags;
  flags.base_url = "http://flag/v1";
  flags.model = "flag-model";
  flags.api_key = "sk-flag";
  flags.temperature = 0.2;
  flags.max_tokens = 1000;
  m = ResolveModels(flags);
  EXPECT_EQ(m[0].base_url, "http://flag/v1");
  EXPECT_EQ(m[0].model, "flag-model");
  EXPECT_EQ(m[0].api_key, "sk-flag");
  EXPECT_EQ(m[0].temperature, 0.2);
  EXPECT_EQ(m[0].max_tokens, 1000);
  EXPECT_EQ(m[0].Label(), "flag-model");
}

TEST_F(LlmConfig, OpenAiIsTheServerOnlyWithAnOpenAiKey) {
  LlmFlags flags;
  flags.model = "gpt-test";
  std::string error = ErrorOf([&] { ResolveModels(flags); });
  EXPECT_NE(error.find("--llm-base-url"), std::string::npos) << error;
  EXPECT_NE(error.find("KFOUNDRY_LLM_BASE_URL"), std::string::npos) << error;

  setenv("KFOUNDRY_LLM_API_KEY", "sk-ours", 1);
  EXPECT_NE(ErrorOf([&] { ResolveModels(flags); }), "") << "our key alone names no server";

  setenv("OPENAI_API_KEY", "sk-openai", 1);
  std::vector<ModelSettings> m = ResolveModels(flags);
  EXPECT_EQ(m[0].base_url, "https://api.openai.com/v1");
  EXPECT_EQ(m[0].api_key, "sk-ours");
}

TEST_F(LlmConfig, MissingModelOrBadUrlNamesWhereToGiveIt) {
  setenv("KFOUNDRY_LLM_BASE_URL", "http://ours/v1", 1);
  std::string error = ErrorOf([] { ResolveModels({}); });
  EXPECT_NE(error.find("--llm-model"), std::string::npos) << error;
  EXPECT_NE(error.find("KFOUNDRY_LLM_MODEL"), std::string::npos) << error;

  setenv("KFOUNDRY_LLM_BASE_URL", "ours:8000", 1);
  setenv("KFOUNDRY_LLM_MODEL", "m", 1);
  error = ErrorOf([] { ResolveModels({}); });
  EXPECT_TRUE(error.starts_with("KFOUNDRY_LLM_BASE_URL: ours:8000: ")) << error;
}

TEST_F(LlmConfig, ReadsAnEnsemble) {
  setenv("KF_TEST_MODEL_KEY", "sk-from-file-variable", 1);
  LlmFlags flags;
  flags.base_url = "http://default/v1/";
  flags.api_key = "sk-default";
  flags.max_tokens = 2048;
  flags.models_file = WriteModels(R"(
[[model]]
name = "coder"
model = "qwen2.5-coder-32b"
weight = 2.0
temperature = 0.6
price_in = 0.5
price_out = 1.5
context_tokens = 65536

[[model]]
model = "o-mini"
base_url = "https://elsewhere/v1"
api_key_env = "KF_TEST_MODEL_KEY"
weight = 1
max_completion_tokens = 16000
reasoning_effort = "high"

[[model]]
model = "local"
base_url = "http://127.0.0.1:8000/v1"
)");
  std::vector<ModelSettings> m = ResolveModels(flags);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].Label(), "coder");
  EXPECT_EQ(m[0].model, "qwen2.5-coder-32b");
  EXPECT_EQ(m[0].base_url, "http://default/v1/");
  EXPECT_EQ(m[0].api_key, "sk-default");
  EXPECT_EQ(m[0].weight, 2.0);
  EXPECT_EQ(m[0].temperature, 0.6);
  EXPECT_EQ(m[0].max_tokens, 2048);
  EXPECT_EQ(m[0].context_tokens, 65536);
  EXPECT_DOUBLE_EQ(m[0].Cost(1'000'000, 2'000'000), 0.5 + 3.0);
  EXPECT_EQ(m[1].Label(), "o-mini");
  EXPECT_EQ(m[1].base_url, "https://elsewhere/v1");
  EXPECT_EQ(m[1].api_key, "sk-from-file-variable");
  EXPECT_EQ(m[1].weight, 1.0);
  EXPECT_EQ(m[1].max_completion_tokens, 16000);
  EXPECT_EQ(m[1].reasoning_effort, "high");
  EXPECT_EQ(m[1].temperature, 0.7);
  EXPECT_EQ(m[2].api_key, "") << "the default key is not sent to another server";
}

TEST_F(LlmConfig, FileErrorsNameFileLineAndField) {
  ModelSettings defaults;
  defaults.base_url = "http://default/v1";
  std::string path = WriteModels("[[model]]\nmodel = \"a\"\nweight = \"two\"\n");
  EXPECT_EQ(ErrorOf([&] { LoadModelsFile(path, defaults); }),
            path + ":3: model[0].weight: expected a number");

  path = WriteModels("[[model]]\nmodel = \"a\"\n\n[[model]]\nmodel = \"b\"\nwieght = 2\n");
  std::string error = ErrorOf([&] { LoadModelsFile(path, defaults); });
  EXPECT_TRUE(error.starts_with(path + ":6: model[1].wieght: unknown field (known: name, model"))
      << error;

  path = WriteModels("[[model]]\nmodel = \"a\"\napi_key = \"sk-in-a-file\"\n");
  error = ErrorOf([&] { LoadModelsFile(path, defaults); });
  EXPECT_TRUE(error.starts_with(path + ":3: model[0].api_key: ")) << error;
  EXPECT_NE(error.find("api_key_env"), std::string::npos) << error;
  EXPECT_EQ(error.find("sk-in-a-file"), std::string::npos) << error;

  path = WriteModels("[[model]]\nmodel = \"a\"\n\n[[model]]\nname = \"no id\"\n");
  EXPECT_EQ(ErrorOf([&] { LoadModelsFile(path, defaults); }),
            path + ":4: model[1].model: missing: the model id to ask for");

  path = WriteModels("[[model]]\nmodel = \"a\"\napi_key_env = \"KF_TEST_MODEL_KEY\"\n");
  EXPECT_EQ(
      ErrorOf([&] { LoadModelsFile(path, defaults); }),
      path + ":3: model[0].api_key_env: the environment variable KF_TEST_MODEL_KEY is not set");

  path = WriteModels("[[model]]\nmodel = \"a\"\n[[model]]\nmodel = \"a\"\n");
  error = ErrorOf([&] { LoadModelsFile(path, defaults); });
  EXPECT_TRUE(error.starts_with(path + ":3: model[1].name: the label \"a\"")) << error;

  path = WriteModels("[model]\nmodel = \"a\"\n");
  error = ErrorOf([&] { LoadModelsFile(path, defaults); });
  EXPECT_NE(error.find("expected [[model]] tables"), std::string::npos) << error;

  path = WriteModels("[[model]]\nmodel = \"a\"\n");
  error = ErrorOf([&] { LoadModelsFile(path, ModelSettings{}); });
  EXPECT_TRUE(error.starts_with(path + ":1: model[0].base_url: no server")) << error;
}

TEST_F(LlmConfig, AModelFlagAndAModelsFileConflict) {
  LlmFlags flags;
  flags.base_url = "http://x/v1";
  flags.model = "m";
  flags.models_file = WriteModels("[[model]]\nmodel = \"a\"\n");
  std::string error = ErrorOf([&] { ResolveModels(flags); });
  EXPECT_TRUE(error.starts_with("--llm-model: m: ")) << error;
}

TEST_F(LlmConfig, TheDocumentedEnsembleLoads) {
  setenv("OPENAI_API_KEY", "sk-openai", 1);
  LlmFlags flags;
  flags.models_file = std::string(KF_TEST_DATA) + "/../../examples/llm/models.toml";
  std::vector<ModelSettings> models = ResolveModels(flags);
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[0].Label(), "coder");
  EXPECT_DOUBLE_EQ(models[0].weight, 2.0);
  EXPECT_EQ(models[1].base_url, "http://127.0.0.1:11434/v1");
  EXPECT_EQ(models[2].api_key, "sk-openai");
  EXPECT_EQ(models[2].max_completion_tokens, 16000);
  EXPECT_EQ(models[2].reasoning_effort, "medium");
  EXPECT_LT(models[2].temperature, 0);
  EXPECT_GT(models[2].Cost(1000000, 0), 1.0);
}

}  // namespace
}  // namespace kf
