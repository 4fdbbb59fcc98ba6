#include "dist/queue_names.hpp"

#include <cctype>

namespace kf {

std::string QueueSlug(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unnamed" : out;
}

std::string RunQueueName(const DeviceInfo& device) {
  return "kf.run." + QueueSlug(device.backend) + "." + QueueSlug(device.arch) + "." +
         QueueSlug(device.name);
}

std::string WorkerQueueName(const std::string& run_queue, std::string_view worker_id) {
  return run_queue + ".w." + QueueSlug(worker_id);
}

std::string BuildQueueName(std::string_view backend) {
  return "kf.build." + QueueSlug(backend);
}

std::string ResultsQueueName(std::string_view run_id) {
  return "kf.results." + QueueSlug(run_id);
}

std::string ProposalsQueueName(std::string_view run_id) {
  return "kf.proposals." + QueueSlug(run_id);
}

QueueSpec RunQueueSpec(const std::string& name) {
  return QueueSpec(name, kRunDeliveryLimit, kDeadLetterQueue);
}

}  // namespace kf
