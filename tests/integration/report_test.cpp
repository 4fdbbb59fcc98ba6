// `kfoundry report` and `kfoundry serve` on a real PoCL run: the report holds what `optimize`
// found (cross-checked against its --json), needs nothing from the network, and the server's
// JSON endpoints answer the same, with 404s (never a crash) for bad names. The browser checks
// are tests/ui/ (run by ctest as ReportUi).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <set>

#include "kf_process.hpp"

namespace kf {
namespace {

using nlohmann::json;

// One PoCL run for the tests of this file, made on first use (once per process: ctest runs each
// test in its own).
struct SharedRun {
  std::string dir, store;
  json optimize;  // its --json
};

const SharedRun& ThePoclRun() {
  static SharedRun run = [] {
    SharedRun r;
    r.dir = testing::Scratch("report", "run");
    r.store = "sqlite:" + r.dir + "/kf.db";
    testing::KfResult o = testing::RunKfoundry(fmt::format(
        "optimize rope_llama3 --device opencl --budget 14 --tune-budget 3 --top 2 --repeats 2 "
        "--store {} --run r1 --out {}/out --json",
        r.store, r.dir));
    EXPECT_EQ(o.exit_code, 0) << o.err;
    r.optimize = o.json;
    return r;
  }();
  return run;
}

// The page's data (no regex: libstdc++'s recurses per character and overflows on a report).
json PageData(const std::string& html) {
  const std::string open = R"(<script id="kf-data" type="application/json">)";
  size_t start = html.find(open);
  if (start == std::string::npos) return nullptr;
  start += open.size();
  size_t end = html.find("</script>", start);
  if (end == std::string::npos) return nullptr;
  return json::parse(html.substr(start, end - start), nullptr, false);
}

// Every place the page names a resource by URL on another origin: src=, href=, action= or url(
// followed by http:, https: or a protocol-relative //.
std::vector<std::string> RemoteResources(const std::string& html) {
  std::vector<std::string> found;
  const std::vector<std::string> attrs = {"src=", "href=", "action=", "url("};
  for (const std::string& attr : attrs) {
    for (size_t at = html.find(attr); at != std::string::npos; at = html.find(attr, at + 1)) {
      size_t v = at + attr.size();
      while (v < html.size() && (html[v] == '"' || html[v] == '\'' || html[v] == ' ')) ++v;
      std::string value = html.substr(v, 8);
      if (value.rfind("http:", 0) == 0 || value.rfind("https:", 0) == 0 ||
          value.rfind("//", 0) == 0)
        found.push_back(html.substr(at, 80));
    }
  }
  return found;
}

std::string Column(const json& view, const json& row, const std::string& name) {
  for (size_t i = 0; i < view["columns"].size(); ++i)
    if (view["columns"][i] == name) return row[i].dump();
  return "";
}

TEST(OpenCLReport, TheReportHoldsWhatOptimizeFoundAndLoadsNothingFromTheNetwork) {
  if (!testing::HasBackend("opencl")) GTEST_SKIP() << "no OpenCL device";
  const SharedRun& run = ThePoclRun();
  ASSERT_TRUE(run.optimize.is_object());
  std::string file = run.dir + "/r1.html";
  testing::KfResult r =
      testing::RunKfoundry(fmt::format("report r1 --store {} -o {}", run.store, file));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(file), std::string::npos) << r.out;
  std::string html = testing::ReadText(file);
  // No resource by URL (the browser test watches the requests themselves).
  std::vector<std::string> remote = RemoteResources(html);
  EXPECT_TRUE(remote.empty()) << remote.front();
  json data = PageData(html);
  ASSERT_TRUE(data.is_object()) << "no kf-data JSON in the report";
  EXPECT_EQ(data["mode"], "report");
  const json& view = data["run"];

  int search = 0;
  for (const json& row : view["evaluations"])
    search += Column(view, row, "purpose") == "\"search\"";
  EXPECT_EQ(search, run.optimize["evaluations"].get<int>());
  std::set<std::string> report_cells, optimize_cells;
  for (const json& c : view["archive"]) report_cells.insert(c["cell"].dump());
  for (const json& c : run.optimize["archive"]) optimize_cells.insert(c["cell"].dump());
  EXPECT_EQ(report_cells, optimize_cells);
  ASSERT_TRUE(run.optimize["best"].is_object());
  ASSERT_TRUE(view.contains("best"));
  const std::string best = run.optimize["best"]["kernel_id"];
  EXPECT_EQ(view["best"]["kernel"], best);
  // Every kernel has its detail, and the best one's source is the file optimize wrote.
  for (const auto& [id, k] : view["kernels"].items()) {
    ASSERT_TRUE(data["details"].contains(id)) << id;
    EXPECT_FALSE(data["details"][id]["source"].get<std::string>().empty());
  }
  std::string best_file = testing::ReadText(run.optimize["best"]["kernel_file"]);
  EXPECT_NE(best_file.find(data["details"][best]["source"].get<std::string>().substr(0, 200)),
            std::string::npos);
  EXPECT_EQ(view["finals"].size(), run.optimize["final"].size());
  EXPECT_TRUE(view["run"]["finished"].get<bool>());
}

TEST(OpenCLReport, AnUnknownRunOrStoreIsABadInputThatSaysWhatThereIs) {
  if (!testing::HasBackend("opencl")) GTEST_SKIP() << "no OpenCL device";
  const SharedRun& run = ThePoclRun();
  testing::KfResult r = testing::RunKfoundry(fmt::format("report nope --store {}", run.store));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("run nope"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("r1"), std::string::npos) << r.err;  // the runs it has
  r = testing::RunKfoundry(fmt::format("report r1 --store sqlite:{}/absent.db", run.dir));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no store there"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(run.dir + "/absent.db"));  // a reader never creates one
}

// `kfoundry serve --port 0` in the background; its first line says the port, the next the token
// when it made one.
class Server {
 public:
  explicit Server(const std::string& store, const std::string& host = "127.0.0.1") {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      std::string bin = testing::KfBinary();
      unsetenv("KFOUNDRY_SERVE_TOKEN");
      execl(bin.c_str(), bin.c_str(), "serve", "--store", store.c_str(), "--port", "0", "--host",
            host.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    auto read_line = [&] {
      std::string line;
      char c;
      while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
      return line;
    };
    std::string line = read_line();
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"(http://[^:]+:(\d+)/)")))
      port_ = std::stoi(m[1].str());
    if (!IsLoopback(host)) {
      line = read_line();
      if (std::regex_search(line, m, std::regex(R"(\?token=([0-9a-f]+))"))) token_ = m[1].str();
    }
    close(out[0]);
  }
  static bool IsLoopback(const std::string& host) { return host.rfind("127.", 0) == 0; }
  const std::string& token() const { return token_; }
  ~Server() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool Alive() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string token_;
};

TEST(OpenCLServe, TheEndpointsAnswerTheRunAndBadNamesAre404s) {
  if (!testing::HasBackend("opencl")) GTEST_SKIP() << "no OpenCL device";
  const SharedRun& run = ThePoclRun();
  Server server(run.store);
  ASSERT_GT(server.port(), 0) << "serve did not say its port";
  httplib::Client http("127.0.0.1", server.port());
  http.set_read_timeout(60, 0);

  auto get = [&](const std::string& path, int status) {
    httplib::Result res = http.Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return json();
    EXPECT_EQ(res->status, status) << path << ": " << res->body;
    if (res->get_header_value("Content-Type").find("application/json") == std::string::npos)
      return json(res->body);
    return json::parse(res->body, nullptr, false);
  };
  json runs = get("/api/runs", 200);
  ASSERT_EQ(runs["runs"].size(), 1u) << runs.dump();
  EXPECT_EQ(runs["runs"][0]["name"], "r1");
  EXPECT_EQ(
      runs["runs"][0]["evaluations"].get<int>(),
      run.optimize["evaluations"].get<int>() + run.optimize["totals"]["reverified_now"].get<int>());
  json view = get("/api/runs/r1", 200);
  EXPECT_EQ(view["best"]["kernel"], run.optimize["best"]["kernel_id"]);
  EXPECT_EQ(get("/api/runs/r1/version", 200)["version"], view["version"]);
  json detail =
      get("/api/runs/r1/kernels/" + run.optimize["best"]["kernel_id"].get<std::string>(), 200);
  EXPECT_NE(detail["source"].get<std::string>().find("@kernel"), std::string::npos);
  EXPECT_FALSE(detail["evaluations"].empty());

  for (const char* bad :
       {"/api/runs/nope", "/api/runs/nope/version", "/api/runs/r1/kernels/k0123",
        "/api/runs/nope/kernels/k0123", "/api/runs/r1/kernels/%2e%2e", "/api/nothing"}) {
    json error = get(bad, 404);
    EXPECT_TRUE(error.is_object() && error.contains("error")) << bad << ": " << error.dump();
  }
  get("/runs/nope", 404);
  EXPECT_NE(get("/runs/r1", 200).get<std::string>().find("kf-data"), std::string::npos);
  EXPECT_NE(get("/", 200).get<std::string>().find("kf-data"), std::string::npos);
  EXPECT_TRUE(server.Alive());
}

TEST(OpenCLServe, BeyondLoopbackEveryRequestNeedsTheTokenItPrinted) {
  if (!testing::HasBackend("opencl")) GTEST_SKIP() << "no OpenCL device";
  const SharedRun& run = ThePoclRun();
  Server server(run.store, "0.0.0.0");
  ASSERT_GT(server.port(), 0) << "serve did not say its port";
  ASSERT_EQ(server.token().size(), 32u) << "serve did not print a token";
  httplib::Client http("127.0.0.1", server.port());
  http.set_read_timeout(60, 0);
  for (const char* path : {"/", "/api/runs", "/api/runs/r1", "/runs/r1", "/api/nothing"}) {
    httplib::Result res = http.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 401) << path;
    EXPECT_EQ(res->body.find("r1"), std::string::npos) << path << " told something";
  }
  httplib::Result wrong =
      http.Get("/api/runs", {{"Authorization", "Bearer " + std::string(32, '0')}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  httplib::Result bearer = http.Get("/api/runs", {{"Authorization", "Bearer " + server.token()}});
  ASSERT_TRUE(bearer);
  EXPECT_EQ(bearer->status, 200);
  EXPECT_NE(bearer->body.find("r1"), std::string::npos);
  // A browser: the printed URL once, then its cookie.
  httplib::Result page = http.Get(("/?token=" + server.token()).c_str());
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  const std::string cookie = page->get_header_value("Set-Cookie");
  ASSERT_NE(cookie.find("kf_token=" + server.token()), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  httplib::Result api = http.Get("/api/runs/r1", {{"Cookie", cookie.substr(0, cookie.find(';'))}});
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 200);
  EXPECT_TRUE(server.Alive());
}

}  // namespace
}  // namespace kf
