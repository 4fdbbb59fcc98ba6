#include "eval/device_workspace.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <utility>

#include "eval/inputs.hpp"
#include "eval/workspace.hpp"

namespace kf {

namespace {

constexpr uint32_t kGuardPattern = 0xA5A5A5A5u;
constexpr size_t kGuardBytes = 4096;

size_t RoundUp(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

bool Drawn(const ArgSpec& a) {
  return a.init.kind == InitSpec::Kind::kNormal || a.init.kind == InitSpec::Kind::kUniform ||
         a.init.kind == InitSpec::Kind::kRandInt;
}

}  // namespace

struct DeviceWorkspace::Buffer {
  Device& device;
  const ArgSpec arg;  // a copy: a scratch buffer's is made up for it
  size_t count = 0, bytes = 0;
  size_t before = 0, total = 0;  // the guard before the data is [0, before); the data follows
  BufferHandle whole = 0, view = 0;
  BufferHandle ref = 0, previous = 0, kept = 0, pristine = 0;

  Buffer(Device& d, ArgSpec a) : device(d), arg(std::move(a)) {}
  ~Buffer() {
    // Scrubbed before it is freed: a later allocation that lands on this memory finds nothing.
    if (view) device.Free(view);
    if (whole) (void)device.Fill(whole, 0, total);
    for (BufferHandle h : {ref, previous, kept, pristine})
      if (h) (void)device.Fill(h, 0, std::max<size_t>(bytes, 4));
    (void)device.Synchronize();
    for (BufferHandle h : {whole, ref, previous, kept, pristine})
      if (h) device.Free(h);
  }
  size_t after() const { return total - before - bytes; }
};

std::unique_ptr<DeviceWorkspace::Buffer> DeviceWorkspace::Guarded(const ArgSpec& arg,
                                                                  size_t count) {
  const size_t align = std::max<size_t>(device_.ViewAlignment(), 4);
  auto b = std::make_unique<Buffer>(device_, arg);
  b->count = count;
  b->bytes = b->count * DTypeSize(arg.dtype);
  b->before = RoundUp(kGuardBytes, align);
  b->total = b->before + RoundUp(b->bytes, align) + kGuardBytes;
  Must(device_.Alloc(b->total, &b->whole), "allocating a workspace buffer");
  // Scrubbed when allocated: a fresh allocation may land on memory an earlier kernel wrote.
  Must(tools_.Fill(b->whole, 0, b->total, 0), "scrubbing a workspace buffer");
  Must(device_.View(b->whole, b->before, b->bytes, &b->view), "a view of a workspace buffer");
  Must(tools_.Fill(b->whole, 0, b->before, kGuardPattern), "filling a guard zone");
  Must(tools_.Fill(b->whole, b->before + b->bytes, b->after(), kGuardPattern),
       "filling a guard zone");
  return b;
}

void DeviceWorkspace::UseScratch(const Kernel& kernel, const std::vector<int64_t>& counts) {
  bool same = scratch_.size() == kernel.scratch.size();
  for (size_t i = 0; same && i < scratch_.size(); ++i) {
    same = scratch_[i]->arg.name == kernel.scratch[i].name &&
           scratch_[i]->arg.dtype == kernel.scratch[i].dtype &&
           scratch_[i]->count == static_cast<size_t>(counts[i]);
  }
  if (same) return;
  scratch_.clear();
  candidate_args_.resize(buffers_.size());
  for (size_t i = 0; i < kernel.scratch.size(); ++i) {
    ArgSpec arg;
    arg.name = kernel.scratch[i].name;
    arg.dtype = kernel.scratch[i].dtype;
    arg.role = ArgRole::kOut;
    arg.line = kernel.scratch[i].line;
    scratch_.push_back(Guarded(arg, static_cast<size_t>(counts[i])));
    KernelArg view{};
    view.kind = KernelArg::Kind::kBuffer;
    view.buffer = scratch_.back()->view;
    candidate_args_.push_back(view);
  }
}

DeviceWorkspace::DeviceWorkspace(Device& device, DeviceTools& tools, const Task& task,
                                 const SizeSet& set, bool checks)
    : device_(device), tools_(tools), set_(set), env_(SizesEnv(set.sizes)), checks_(checks) {
  leak_for_test_ = std::getenv("KF_TEST_LEAK_REFERENCE") != nullptr;
  // Scrubbed when allocated: a fresh allocation may land on memory an earlier kernel wrote.
  auto plain = [&](size_t bytes) {
    BufferHandle h = 0;
    Must(device_.Alloc(std::max<size_t>(bytes, 4), &h), "allocating a workspace buffer");
    Must(tools_.Fill(h, 0, std::max<size_t>(bytes, 4), 0), "scrubbing a workspace buffer");
    return h;
  };
  for (size_t i = 0; i < task.args.size(); ++i) {
    const ArgSpec& a = task.args[i];
    if (!a.is_buffer) {
      buffers_.push_back(nullptr);
      KernelArg arg = ScalarArg(a, env_);
      reference_args_.push_back(arg);
      candidate_args_.push_back(arg);
      continue;
    }
    std::unique_ptr<Buffer> b = Guarded(a, static_cast<size_t>(ElementCount(a, env_)));
    if (a.role != ArgRole::kIn) {
      b->ref = plain(b->bytes);
      if (checks_) {
        b->previous = plain(b->bytes);
        b->kept = plain(b->bytes);
      }
      outputs_.push_back(i);
    }
    if (a.role == ArgRole::kInOut) b->pristine = plain(b->bytes);
    if (a.role != ArgRole::kOut) inputs_.push_back(i);
    // Inputs that do not depend on the seed are made once, on the host.
    if (a.role != ArgRole::kOut && !Drawn(a)) {
      HostBuffer h = GenerateInput(a, env_, 0);
      BufferHandle target = a.role == ArgRole::kInOut ? b->pristine : b->view;
      Must(device_.Write(target, h.bytes.data(), h.bytes.size()), "uploading an input");
    }
    KernelArg candidate{};
    candidate.kind = KernelArg::Kind::kBuffer;
    candidate.buffer = b->view;
    KernelArg reference = candidate;
    if (a.role != ArgRole::kIn) reference.buffer = b->ref;
    candidate_args_.push_back(candidate);
    reference_args_.push_back(reference);
    buffers_.push_back(std::move(b));
  }
  input_hashes_.assign(task.args.size(), 0);
  Must(device_.Synchronize(), "preparing a workspace");
}

DeviceWorkspace::~DeviceWorkspace() = default;

DeviceStatus DeviceWorkspace::Draw(uint64_t seed) {
  for (size_t i : inputs_) {
    Buffer& b = *buffers_[i];
    if (!Drawn(b.arg)) continue;
    BufferHandle target = b.arg.role == ArgRole::kInOut ? b.pristine : b.view;
    // randint's bounds are this set's (DeviceTools::Draw keeps the draw below high).
    auto [a, b_bound] = b.arg.init.BoundsAt(env_);
    if (DeviceStatus s = tools_.Draw(target, b.arg.dtype, b.count, b.arg.init.kind, a, b_bound,
                                     seed, static_cast<uint32_t>(i));
        !s.ok())
      return s;
  }
  drawn_hashes_.clear();
  for (size_t i : inputs_) {
    Buffer& b = *buffers_[i];
    if (b.arg.role == ArgRole::kIn)
      drawn_hashes_.emplace_back(i, tools_.EnqueueHash(b.whole, b.before, b.bytes));
  }
  return DeviceStatus::Ok();
}

DeviceStatus DeviceWorkspace::EnqueueReference(std::span<const LaunchStep> steps) {
  for (size_t i : outputs_) {
    Buffer& b = *buffers_[i];
    if (b.arg.role == ArgRole::kInOut)
      Must(tools_.Copy(b.pristine, 0, b.ref, 0, b.bytes), "restoring an in-out buffer");
  }
  references_dirty_ = true;
  DeviceStatus s = DeviceStatus::Ok();
  for (size_t i = 0; i < steps.size() && s.ok(); ++i)
    s = device_.Enqueue(*steps[i].kernel, reference_args_, steps[i].launch);
  if (s.ok() && leak_for_test_) {
    for (size_t i : outputs_) {
      Buffer& b = *buffers_[i];
      Must(tools_.Copy(b.ref, 0, b.whole, b.before, b.bytes), "leaking the reference (test)");
    }
  }
  return s;
}

void DeviceWorkspace::SetReference(const std::vector<HostBuffer>& outputs) {
  references_dirty_ = true;
  for (size_t i : outputs_) {
    Buffer& b = *buffers_[i];
    const HostBuffer& h = outputs.at(i);
    if (h.bytes.size() != b.bytes)
      throw ToolError(fmt::format("the reference's output '{}' has {} bytes, not {}", b.arg.name,
                                  h.bytes.size(), b.bytes));
    Must(device_.Write(b.ref, h.bytes.data(), b.bytes), "uploading the reference's output");
    if (leak_for_test_)
      Must(tools_.Copy(b.ref, 0, b.whole, b.before, b.bytes), "leaking the reference (test)");
  }
}

std::vector<HostBuffer> DeviceWorkspace::ReadInputs() {
  std::vector<HostBuffer> out(buffers_.size());
  for (size_t i : inputs_) {
    Buffer& b = *buffers_[i];
    HostBuffer& h = out[i];
    h.dtype = b.arg.dtype;
    h.count = b.count;
    h.bytes.resize(b.bytes);
    Must(device_.Read(b.arg.role == ArgRole::kInOut ? b.pristine : b.view, h.bytes.data(), b.bytes),
         "reading an input back");
  }
  return out;
}

void DeviceWorkspace::ScrubReferences() {
  if (!references_dirty_) return;
  for (size_t i : outputs_) {
    Buffer& b = *buffers_[i];
    Must(tools_.Fill(b.ref, 0, b.bytes, PoisonPattern(b.arg.dtype)), "scrubbing a reference");
  }
  references_dirty_ = false;
}

void DeviceWorkspace::PrepareCandidate() {
  for (const std::unique_ptr<Buffer>& b : scratch_)
    Must(tools_.Fill(b->whole, b->before, b->bytes, PoisonPattern(b->arg.dtype)),
         "poisoning a scratch buffer");
  for (size_t i : outputs_) {
    Buffer& b = *buffers_[i];
    if (b.arg.role == ArgRole::kInOut) {
      Must(tools_.Copy(b.pristine, 0, b.whole, b.before, b.bytes), "restoring an in-out buffer");
    } else {
      Must(tools_.Fill(b.whole, b.before, b.bytes, PoisonPattern(b.arg.dtype)),
           "poisoning an output");
    }
  }
}

DeviceStatus DeviceWorkspace::Inspect(bool against_previous, const Tolerance& tol,
                                      LaunchInspection* out) {
  *out = LaunchInspection{};
  struct Guard {
    Buffer* buffer;
    int before, after;
  };
  std::vector<Guard> guards;
  std::vector<std::pair<size_t, int>> hashes;
  std::vector<int> compares, previous;
  auto guard = [&](Buffer& b) {
    guards.push_back({&b, tools_.EnqueueScan(b.whole, 0, b.before, kGuardPattern),
                      tools_.EnqueueScan(b.whole, b.before + b.bytes, b.after(), kGuardPattern)});
  };
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (!buffers_[i]) continue;
    Buffer& b = *buffers_[i];
    guard(b);
    if (b.arg.role == ArgRole::kIn)
      hashes.emplace_back(i, tools_.EnqueueHash(b.whole, b.before, b.bytes));
  }
  for (const std::unique_ptr<Buffer>& b : scratch_) guard(*b);
  for (size_t i : outputs_) {
    Buffer& b = *buffers_[i];
    uint32_t poison = PoisonPattern(b.arg.dtype);
    compares.push_back(tools_.EnqueueCompare(b.ref, b.view, b.arg.dtype, b.count, tol, poison));
    if (against_previous && b.previous)
      previous.push_back(
          tools_.EnqueueCompare(b.previous, b.view, b.arg.dtype, b.count, tol, poison));
  }
  if (DeviceStatus s = tools_.Collect(); !s.ok()) return s;
  for (auto [i, t] : drawn_hashes_) input_hashes_[i] = tools_.HashOf(t);
  drawn_hashes_.clear();
  for (const Guard& g : guards) {
    Buffer& b = *g.buffer;
    RangeScan before = tools_.ScanOf(g.before), after = tools_.ScanOf(g.after);
    if (before.changed == 0 && after.changed == 0) continue;
    if (out->guard.empty()) {
      out->guard =
          after.changed > 0
              ? fmt::format("wrote {} bytes past the end of '{}'", after.last + 1, b.arg.name)
              : fmt::format("wrote {} bytes before the start of '{}'",
                            static_cast<int64_t>(b.before) - before.first, b.arg.name);
    }
    // The next launch starts from clean guards.
    Must(tools_.Fill(b.whole, 0, b.before, kGuardPattern), "filling a guard zone");
    Must(tools_.Fill(b.whole, b.before + b.bytes, b.after(), kGuardPattern),
         "filling a guard zone");
  }
  for (auto [i, t] : hashes) {
    if (out->modified_input.empty() && tools_.HashOf(t) != input_hashes_[i])
      out->modified_input = buffers_[i]->arg.name;
  }
  for (int t : compares) out->outputs.push_back(tools_.FiguresOf(t));
  for (int t : previous) out->vs_previous.push_back(tools_.FiguresOf(t));
  return DeviceStatus::Ok();
}

void DeviceWorkspace::KeepOutputs() {
  for (size_t i : outputs_) {
    Buffer& b = *buffers_[i];
    if (b.kept) Must(tools_.Copy(b.whole, b.before, b.kept, 0, b.bytes), "keeping an output");
  }
}

DeviceStatus DeviceWorkspace::DifferFromKept(int64_t* differing) {
  *differing = 0;
  std::vector<int> tickets;
  for (size_t i : outputs_) {
    Buffer& b = *buffers_[i];
    if (b.kept) tickets.push_back(tools_.EnqueueDiffer(b.view, b.kept, b.arg.dtype, b.count));
  }
  if (DeviceStatus s = tools_.Collect(); !s.ok()) return s;
  for (int t : tickets) *differing += tools_.DifferOf(t);
  return DeviceStatus::Ok();
}

void DeviceWorkspace::KeepPrevious() {
  for (size_t i : outputs_) {
    Buffer& b = *buffers_[i];
    if (b.previous)
      Must(tools_.Copy(b.whole, b.before, b.previous, 0, b.bytes), "keeping an output");
  }
}

double DeviceWorkspace::OutputElement(size_t output, int64_t index, bool reference) {
  Buffer& b = *buffers_[outputs_.at(output)];
  size_t size = DTypeSize(b.arg.dtype);
  if (index < 0 || static_cast<size_t>(index) >= b.count) return 0;
  // Through the guard before the data: a scratch word the launch has been judged on already.
  BufferHandle src = reference ? b.ref : b.whole;
  size_t offset = (reference ? 0 : b.before) + static_cast<size_t>(index) * size;
  std::byte element[8] = {};
  Must(tools_.Copy(src, offset, b.whole, 0, size), "reading an element");
  Must(device_.Read(b.whole, element, size), "reading an element");
  Must(tools_.Fill(b.whole, 0, b.before, kGuardPattern), "filling a guard zone");
  return LoadElement(element, b.arg.dtype, 0);
}

}  // namespace kf
