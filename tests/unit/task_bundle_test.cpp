#include "core/task_bundle.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/identity.hpp"
#include "core/input_error.hpp"
#include "core/task.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

const std::string kSoftmaxRows = std::string(KF_TASKS) + "/softmax_rows";

// A fresh folder under the temporary directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("kf_bundle_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path path() const { return path_; }
  // The folder's entries by name (the cache's ids and any temporary folder left behind).
  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    for (const fs::directory_entry& e : fs::directory_iterator(path_))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path path_;
};

std::string ReadFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(TaskBundleTest, ARealTaskRoundTripsAndKeepsItsContentId) {
  TaskBundle bundle = PackTaskFolder(kSoftmaxRows, "softmax_rows");
  EXPECT_EQ(bundle.id, TaskContentId(kSoftmaxRows));
  EXPECT_EQ(bundle.id, LoadTask(kSoftmaxRows).id);
  EXPECT_EQ(bundle.name, "softmax_rows");
  ASSERT_TRUE(bundle.files.count("task.toml"));
  EXPECT_EQ(bundle.files.size(), TaskFolderFiles(kSoftmaxRows).size());
  EXPECT_EQ(bundle.files.at("task.toml"), ReadFile(kSoftmaxRows + "/task.toml"));

  // Through its JSON (as it travels) and back into a folder.
  TaskBundle received = TaskBundleFromJson(nlohmann::json::parse(TaskBundleToJson(bundle).dump()));
  EXPECT_EQ(received.id, bundle.id);
  EXPECT_EQ(received.name, bundle.name);
  EXPECT_EQ(received.files, bundle.files);
  TempDir cache;
  std::string folder = UnpackTaskBundle(received, cache.path().string());
  EXPECT_EQ(fs::path(folder), cache.path() / bundle.id);
  EXPECT_EQ(TaskContentId(folder), bundle.id);
  for (const auto& [path, bytes] : bundle.files)
    EXPECT_EQ(ReadFile(fs::path(folder) / path), bytes);
  Task task = LoadTask(folder);
  EXPECT_EQ(task.id, bundle.id);
  EXPECT_EQ(task.name, "softmax_rows");
  EXPECT_EQ(cache.Entries(), std::vector<std::string>{bundle.id});  // no temporary folder left
}

TEST(TaskBundleTest, HiddenFilesStayOutAndBinaryFilesSurvive) {
  TempDir task;
  fs::create_directories(task.path() / ".git");
  fs::create_directories(task.path() / "data");
  std::ofstream(task.path() / ".git" / "HEAD") << "ref";
  std::ofstream(task.path() / ".notes") << "mine";
  std::ofstream(task.path() / "task.toml") << "name = 'x'\n";
  std::string binary("\0\x01\xff\0end", 7);
  std::ofstream(task.path() / "data" / "w.bin", std::ios::binary) << binary;
  TaskBundle bundle = PackTaskFolder(task.path().string(), "x");
  EXPECT_EQ(bundle.id, TaskContentId(task.path().string()));
  ASSERT_EQ(bundle.files.size(), 2u);
  EXPECT_EQ(bundle.files.at("data/w.bin"), binary);

  TaskBundle received = TaskBundleFromJson(TaskBundleToJson(bundle));
  EXPECT_EQ(received.files.at("data/w.bin"), binary);
  TempDir cache;
  std::string folder = UnpackTaskBundle(received, cache.path().string());
  EXPECT_EQ(ReadFile(fs::path(folder) / "data" / "w.bin"), binary);
}

TEST(TaskBundleTest, ATamperedOrCutBundleIsRefusedAndLeavesNothing) {
  TaskBundle bundle = PackTaskFolder(kSoftmaxRows, "softmax_rows");
  TaskBundle tampered = bundle;
  tampered.files["task.toml"] += "\n# changed\n";
  TaskBundle cut = bundle;
  cut.files.erase(cut.files.begin());
  TaskBundle added = bundle;
  added.files["extra.cl"] = "// not part of the task";
  for (const TaskBundle& bad : {tampered, cut, added}) {
    TempDir cache;
    try {
      UnpackTaskBundle(bad, cache.path().string());
      FAIL() << "a bundle that does not match its id was unpacked";
    } catch (const InputError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(bundle.id), std::string::npos) << m;
      EXPECT_NE(m.find("softmax_rows"), std::string::npos) << m;
      EXPECT_NE(m.find("do not hash to the bundle's id"), std::string::npos) << m;
    }
    EXPECT_TRUE(cache.Entries().empty());
  }
}

TEST(TaskBundleTest, APathOutsideTheFolderIsRefused) {
  TaskBundle bundle = PackTaskFolder(kSoftmaxRows, "softmax_rows");
  TempDir root;
  fs::path cache = root.path() / "cache";
  for (const char* path : {"../x", "a/../../x", "/tmp/x", "./x", ".hidden", "a//b", ""}) {
    TaskBundle bad = bundle;
    bad.files[path] = "escaped";
    EXPECT_THROW(UnpackTaskBundle(bad, cache.string()), InputError) << path;
  }
  EXPECT_FALSE(fs::exists(root.path() / "x"));
  EXPECT_FALSE(fs::exists(cache / bundle.id));
  // The id names the folder: one that is not a content id is refused too.
  for (const char* id : {"../t", "t0", ""}) {
    TaskBundle bad = bundle;
    bad.id = id;
    EXPECT_THROW(UnpackTaskBundle(bad, cache.string()), InputError) << id;
  }
  EXPECT_TRUE(root.Entries().empty());  // refused before anything is written
}

TEST(TaskBundleTest, ACompleteFolderIsReusedAndAnEditedOneRefused) {
  TaskBundle bundle = PackTaskFolder(kSoftmaxRows, "softmax_rows");
  TempDir cache;
  std::string folder = UnpackTaskBundle(bundle, cache.path().string());
  fs::file_time_type written = fs::last_write_time(fs::path(folder) / "task.toml");
  EXPECT_EQ(UnpackTaskBundle(bundle, cache.path().string()), folder);
  EXPECT_EQ(fs::last_write_time(fs::path(folder) / "task.toml"), written);  // not rewritten

  // Edited in place: not used (another process may be reading it, so it is not replaced).
  std::ofstream(fs::path(folder) / "task.toml") << "edited";
  try {
    UnpackTaskBundle(bundle, cache.path().string());
    FAIL() << "an edited cache folder was used";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(folder), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("remove the folder"), std::string::npos) << e.what();
  }
  fs::remove_all(folder);  // as the message says: the next unpack writes it afresh
  EXPECT_EQ(UnpackTaskBundle(bundle, cache.path().string()), folder);
  EXPECT_EQ(ReadFile(fs::path(folder) / "task.toml"), bundle.files.at("task.toml"));
  EXPECT_EQ(cache.Entries(), std::vector<std::string>{bundle.id});
}

// Several threads unpack the same bundle into an empty cache at once: each gets the complete
// folder, one rename wins and the others' temporary folders are gone.
TEST(TaskBundleTest, UnpackersRacingForOneFolderAllGetItComplete) {
  TaskBundle bundle = PackTaskFolder(kSoftmaxRows, "softmax_rows");
  constexpr int kThreads = 4;
  for (int round = 0; round < 10; ++round) {
    TempDir cache;
    std::atomic<int> ready{0};
    std::vector<std::string> folders(kThreads), errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ready++;
        while (ready.load() < kThreads) std::this_thread::yield();
        try {
          folders[t] = UnpackTaskBundle(bundle, cache.path().string());
          if (TaskContentId(folders[t]) != bundle.id) errors[t] = "incomplete folder";
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(errors[t], "") << "thread " << t;
      EXPECT_EQ(folders[t], (cache.path() / bundle.id).string());
    }
    EXPECT_EQ(cache.Entries(), std::vector<std::string>{bundle.id});
  }
}

TEST(TaskBundleTest, AFolderTooLargeOrMissingIsRefused) {
  TempDir task;
  std::ofstream(task.path() / "task.toml") << "name = 'big'\n";
  fs::resize_file(task.path() / "task.toml", (size_t{64} << 20) + 1);  // sparse: nothing written
  try {
    PackTaskFolder(task.path().string(), "big");
    FAIL() << "a folder over 64 MiB was packed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(task.path().string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("64 MiB"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PackTaskFolder((task.path() / "missing").string(), "m"), InputError);
}

TEST(TaskBundleTest, AMalformedBundleDoesNotDecode) {
  nlohmann::json good = TaskBundleToJson({"t0", "x", {{"a", "b"}}});
  EXPECT_EQ(TaskBundleFromJson(good).files.at("a"), "b");
  nlohmann::json no_files = good;
  no_files.erase("files");
  EXPECT_THROW(TaskBundleFromJson(no_files), nlohmann::json::exception);
  nlohmann::json bad_base64 = good;
  bad_base64["files"]["a"] = "!!!";
  EXPECT_THROW(TaskBundleFromJson(bad_base64), std::invalid_argument);
  nlohmann::json files_list = good;
  files_list["files"] = nlohmann::json::array({"a"});
  EXPECT_ANY_THROW(TaskBundleFromJson(files_list));
}

}  // namespace
}  // namespace kf
