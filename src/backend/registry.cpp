#include "backend/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#if KF_HAVE_OPENCL
#include "backend/opencl/opencl_device.hpp"
#endif
#if KF_HAVE_CUDA
#include "backend/cuda/cuda_device.hpp"
#endif

namespace kf {

std::vector<std::unique_ptr<Backend>> MakeBackends() {
  std::vector<std::unique_ptr<Backend>> out;
#if KF_HAVE_CUDA
  out.push_back(MakeCudaBackend());
#endif
#if KF_HAVE_OPENCL
  out.push_back(MakeOpenCLBackend());
#endif
  return out;
}

DeviceListing ListDevices(std::vector<std::unique_ptr<Backend>>& backends) {
  DeviceListing listing;
  for (auto& b : backends) {
    std::string why;
    auto devices = b->Enumerate(&why);
    if (devices.empty())
      listing.notes.push_back(fmt::format("{}: {}", b->name(), why.empty() ? "no devices" : why));
    listing.devices.insert(listing.devices.end(), devices.begin(), devices.end());
  }
  return listing;
}

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool AllDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

bool SelectorMatches(const DeviceInfo& d, const std::string& selector) {
  if (selector.empty()) return true;  // backends are listed CUDA first
  std::string backend_part = selector, rest;
  if (size_t colon = selector.find(':'); colon != std::string::npos) {
    backend_part = selector.substr(0, colon);
    rest = selector.substr(colon + 1);
  }
  if (backend_part.empty() || backend_part == "cuda" || backend_part == "opencl") {
    return d.backend == backend_part &&
           (rest.empty() ||
            (AllDigits(rest) ? d.index == std::stoi(rest)
                             : Lower(d.name).find(Lower(rest)) != std::string::npos));
  }
  return Lower(d.name).find(Lower(selector)) != std::string::npos;
}

std::optional<DeviceInfo> SelectDevice(const DeviceListing& listing, const std::string& selector,
                                       std::string* error) {
  for (const DeviceInfo& d : listing.devices)
    if (SelectorMatches(d, selector)) return d;
  std::string found;
  for (const auto& d : listing.devices) found += fmt::format("\n  {}  {}", d.Selector(), d.name);
  for (const auto& n : listing.notes) found += "\n  (" + n + ")";
  *error =
      fmt::format("no device matches '{}'; found:{}", selector.empty() ? "(default)" : selector,
                  found.empty() ? " nothing" : found);
  return std::nullopt;
}

std::unique_ptr<Device> OpenDevice(std::vector<std::unique_ptr<Backend>>& backends,
                                   const std::string& selector, std::string* error) {
  std::optional<DeviceInfo> chosen = SelectDevice(ListDevices(backends), selector, error);
  if (!chosen) return nullptr;
  for (auto& b : backends) {
    if (b->name() == chosen->backend) {
      std::string open_error;
      auto device = b->Open(chosen->index, &open_error);
      if (!device)
        *error =
            fmt::format("cannot open {} ({}): {}", chosen->Selector(), chosen->name, open_error);
      return device;
    }
  }
  *error = "internal: backend vanished";
  return nullptr;
}

std::unique_ptr<Compiler> MakeOfflineCompiler(std::vector<std::unique_ptr<Backend>>& backends,
                                              const DeviceInfo& target, std::string* why_not) {
  for (auto& b : backends) {
    if (b->name() == target.backend) return b->OfflineCompiler(target, why_not);
  }
  *why_not = "no " + target.backend + " backend in this build";
  return nullptr;
}

std::vector<std::string> SplitSelectors(const std::string& spec) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    parts.push_back(
        spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? spec.size() + 1 : comma + 1;
  }
  return parts;
}

std::vector<std::string> ExpandDeviceSelectors(std::vector<std::unique_ptr<Backend>>& backends,
                                               const std::string& spec, std::string* error) {
  std::vector<std::string> out;
  for (const std::string& one : SplitSelectors(spec)) {
    if (one.size() > 4 && one.compare(one.size() - 4, 4, ":all") == 0) {
      std::string backend = one.substr(0, one.size() - 4);
      size_t before = out.size();
      for (const DeviceInfo& d : ListDevices(backends).devices) {
        if (d.backend == backend) out.push_back(d.Selector());
      }
      if (out.size() == before) {
        *error = fmt::format("'{}': no {} devices here", one, backend);
        return {};
      }
    } else if (!one.empty() || spec.empty()) {
      out.push_back(one);
    }
  }
  // The same device twice would time two candidates on it at once.
  for (size_t i = 0; i < out.size(); ++i) {
    for (size_t j = i + 1; j < out.size(); ++j) {
      if (!out[i].empty() && out[i] == out[j]) {
        *error = fmt::format("'{}' is named twice in --device {}", out[i], spec);
        return {};
      }
    }
  }
  return out;
}

}  // namespace kf
