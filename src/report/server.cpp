#include "report/server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "core/input_error.hpp"
#include "core/task.hpp"
#include "report/page.hpp"
#include "report/run_view.hpp"
#include "search/classifier.hpp"
#include "store/store.hpp"

namespace kf {

namespace {

using nlohmann::json;

void SendJson(httplib::Response& res, const json& body, int status = 200) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  SendJson(res, {{"error", message}}, status);
}

// The tasks of the store's runs, loaded once each.
class TaskCache {
 public:
  const Task* For(const RunInfo& run) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = tasks_.find(run.name);
    if (it == tasks_.end()) it = tasks_.emplace(run.name, TaskOfRun(run)).first;
    return it->second ? &*it->second : nullptr;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::optional<Task>> tasks_;
};

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string NewServeToken() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[16] = {};
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof(bytes)))
    throw std::runtime_error("cannot read /dev/urandom for the dashboard's token");
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

namespace {

// Compares in time that does not depend on where the texts differ.
bool SameToken(const std::string& given, const std::string& token) {
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i)
    diff |= static_cast<unsigned char>(token[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

// The token a request brings: its bearer header, its query, or the cookie a query set.
std::string RequestToken(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  if (auth.rfind("Bearer ", 0) == 0) return auth.substr(7);
  if (req.has_param("token")) return req.get_param_value("token");
  const std::string cookies = req.get_header_value("Cookie");
  for (size_t at = cookies.find("kf_token="); at != std::string::npos;
       at = cookies.find("kf_token=", at + 1)) {
    if (at == 0 || cookies[at - 1] == ' ' || cookies[at - 1] == ';') {
      size_t end = cookies.find(';', at);
      return cookies.substr(at + 9, end == std::string::npos ? std::string::npos : end - at - 9);
    }
  }
  return "";
}

}  // namespace

void Serve(const ServeOptions& options, const std::function<void(int port)>& listening) {
  std::shared_ptr<Store> store = OpenStore(options.store_url, true);
  const std::string shown = RedactStoreUrl(options.store_url);  // never a password in a reply
  const DescriptorSpace space = DescriptorSpace::Load(DefaultDescriptorFile());
  TaskCache tasks;
  httplib::Server server;

  if (!options.token.empty()) {
    server.set_pre_routing_handler([&options](const httplib::Request& req, httplib::Response& res) {
      if (SameToken(RequestToken(req), options.token)) {
        if (req.has_param("token"))
          res.set_header("Set-Cookie",
                         "kf_token=" + options.token + "; Path=/; HttpOnly; SameSite=Strict");
        return httplib::Server::HandlerResponse::Unhandled;
      }
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer");
      res.set_content(
          "this dashboard needs its token: open the URL `kfoundry serve` printed (?token=...), or "
          "send Authorization: Bearer TOKEN\n",
          "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(PageHtml({{"mode", "serve"}}), "text/html; charset=utf-8");
  });
  server.Get(R"(/runs/([^/]+))", [&](const httplib::Request& req, httplib::Response& res) {
    std::string name = req.matches[1];
    if (!store->FindRun(name)) {
      res.status = 404;
      res.set_content(fmt::format("no run '{}' in {}\n", name, shown), "text/plain; charset=utf-8");
      return;
    }
    res.set_content(PageHtml({{"mode", "serve"}, {"run_name", name}}), "text/html; charset=utf-8");
  });
  server.Get("/api/runs", [&](const httplib::Request&, httplib::Response& res) {
    SendJson(res, {{"store", shown}, {"runs", RunList(*store)}});
  });
  server.Get(R"(/api/runs/([^/]+))", [&](const httplib::Request& req, httplib::Response& res) {
    std::optional<RunInfo> run = store->FindRun(req.matches[1]);
    if (!run) throw NotFound(fmt::format("no run '{}' in {}", req.matches[1].str(), shown));
    SendJson(res, RunView(*store, *run, space, tasks.For(*run)));
  });
  server.Get(R"(/api/runs/([^/]+)/version)",
             [&](const httplib::Request& req, httplib::Response& res) {
               std::string name = req.matches[1];
               if (!store->FindRun(name))
                 throw NotFound(fmt::format("no run '{}' in {}", name, shown));
               SendJson(res, {{"version", store->RunVersion(name)}});
             });
  server.Get(R"(/api/runs/([^/]+)/kernels/([^/]+))",
             [&](const httplib::Request& req, httplib::Response& res) {
               SendJson(res, KernelDetail(*store, req.matches[1], req.matches[2]));
             });
  server.set_error_handler([&](const httplib::Request& req, httplib::Response& res) {
    if (res.status != 404 || !res.body.empty()) return;
    if (req.path.rfind("/api/", 0) == 0) {
      SendError(res, 404, "no such endpoint: " + req.path + " (docs/report.md lists them)");
    } else {
      res.set_content("not found: " + req.path + "\n", "text/plain; charset=utf-8");
    }
  });
  server.set_exception_handler(
      [&](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
        try {
          std::rethrow_exception(std::move(error));
        } catch (const NotFound& e) {
          SendError(res, 404, e.what());
        } catch (const std::exception& e) {
          SendError(res, 500, e.what());
        } catch (...) {
          SendError(res, 500, "unknown error");
        }
      });

  int port = options.port;
  if (port == 0) {
    port = server.bind_to_any_port(options.host);
    if (port < 0) throw InputError("--host", 0, options.host, "cannot listen there");
  } else if (!server.bind_to_port(options.host, port)) {
    throw InputError("--port", 0, std::to_string(port),
                     "cannot listen on " + options.host + ":" + std::to_string(port) +
                         " (in use? --port 0 picks a free one)");
  }
  listening(port);
  server.listen_after_bind();
}

}  // namespace kf
