#include "eval/precision_probe.hpp"

#include <fmt/format.h>

#include <cmath>

#include "eval/evaluator.hpp"
#include "eval/philox.hpp"
#include "eval/verdict.hpp"
#include "eval/workspace.hpp"

namespace kf {

int ProbedLowerBits(const std::string& precision) {
  if (precision == "fp32") return 11;
  if (precision == "tf32") return 8;
  return 0;
}

int AllowedBits(const std::string& precision) {
  return precision == "tf32" ? 11 : 24;
}

double RoundToBits(double v, int bits) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  std::frexp(v, &e);
  return std::ldexp(std::nearbyint(std::ldexp(v, bits - e)), e - bits);
}

void SplitForProbe(const HostBuffer& drawn, int lower_bits, int allowed_bits, uint64_t seed,
                   HostBuffer* high, HostBuffer* full) {
  *high = drawn;
  *full = drawn;
  for (size_t i = 0; i < drawn.count; ++i) {
    const double h = RoundToBits(LoadElement(drawn.bytes.data(), drawn.dtype, i), lower_bits);
    // Below a quarter of h's last bit in the lower class (relative 2^-(lower_bits + 1)), on the
    // allowed class's grid; signed, so that the outputs' shifts do not cancel by construction.
    const double u = static_cast<double>(Philox4x32(i, 0x9E37u, seed)[0]) / 4294967296.0;
    const double l = std::ldexp((2 * u - 1) * std::fabs(h), -(lower_bits + 1));
    double x = RoundToBits(static_cast<float>(h + l), allowed_bits);
    if (RoundToBits(x, lower_bits) != h) x = h;  // a tie would round away from h
    StoreElement(high->bytes.data(), drawn.dtype, i, h);
    StoreElement(full->bytes.data(), drawn.dtype, i, x);
  }
}

ProbeReading ReadProbe(const std::vector<double>& cand_full, const std::vector<double>& cand_high,
                       const std::vector<double>& ref_full, const std::vector<double>& ref_high) {
  ProbeReading r;
  double error = 0, magnitude = 0;
  for (size_t i = 0; i < ref_full.size(); ++i) {
    if (!std::isfinite(cand_full[i]) || !std::isfinite(cand_high[i])) {
      r.finite = false;
      return r;
    }
    const double ref_moved = ref_full[i] - ref_high[i];
    r.reference_moved += std::fabs(ref_moved);
    r.candidate_missed += std::fabs((cand_full[i] - cand_high[i]) - ref_moved);
    error += std::fabs(cand_full[i] - ref_full[i]);
    magnitude += std::fabs(ref_full[i]);
  }
  r.candidate_error = magnitude > 0 ? error / magnitude : 0;
  return r;
}

namespace {

bool Probed(const ArgSpec& a) {
  return a.is_buffer && a.role != ArgRole::kOut && a.dtype == DType::kF32 &&
         (a.init.kind == InitSpec::Kind::kNormal || a.init.kind == InitSpec::Kind::kUniform);
}

// The first check set with a few hundred output elements (enough for the sums to mean something,
// small enough to cost little), else the largest.
const SizeSet& ProbeSet(const Task& task) {
  const SizeSet* best = &task.check_sizes.front();
  int64_t best_count = 0;
  for (const SizeSet& set : task.check_sizes) {
    Env env = SizesEnv(set.sizes);
    int64_t count = 0;
    for (const ArgSpec& a : task.args)
      if (a.is_buffer && a.role != ArgRole::kIn) count += ElementCount(a, env);
    if (count >= 256) return set;
    if (count > best_count) {
      best = &set;
      best_count = count;
    }
  }
  return *best;
}

}  // namespace

bool Evaluator::ProbePrecision(const Kernel& kernel, const Config& config,
                               const LoadedKernels& loaded, Evaluation& ev) {
  const int lower_bits = ProbedLowerBits(task_.precision);
  if (lower_bits == 0) return true;
  if (!reference_) {
    ev.hints.push_back(
        "precision not probed: the probe needs a reference kernel, and the "
        "reference is the PyTorch module");
    return true;
  }
  const SizeSet& set = ProbeSet(task_);
  const uint64_t seed = FreshSeed();
  At("check", set.name, seed);
  const std::string where = Where() + ", precision probe";
  const Env env = SizesEnv(set.sizes);
  std::vector<LaunchStep> steps;
  std::vector<int64_t> scratch_counts;
  try {
    steps = MakeSteps(kernel, loaded, config, env);
    scratch_counts = ScratchCounts(kernel, config, env);
  } catch (const ExprError& e) {
    return Fail(ev, Status::kInvalidConfig, fmt::format("launch rule ({}): {}", where, e.what()));
  }
  // Plain buffers of the probe's own, scrubbed and freed when it is done: the candidate runs on
  // both inputs before the reference does.
  std::vector<DeviceBuffer> buffers(task_.args.size());
  std::vector<HostBuffer> full(task_.args.size()), high(task_.args.size());
  std::vector<KernelArg> args;
  bool any_probed = false;
  for (size_t i = 0; i < task_.args.size(); ++i) {
    const ArgSpec& a = task_.args[i];
    if (!a.is_buffer) {
      args.push_back(ScalarArg(a, env));
      continue;
    }
    const size_t bytes =
        std::max<size_t>(static_cast<size_t>(ElementCount(a, env)) * DTypeSize(a.dtype), 4);
    BufferHandle h = 0;
    Must(device_.Alloc(bytes, &h), "allocating a probe buffer");
    buffers[i] = DeviceBuffer(&device_, h, bytes);
    KernelArg arg{};
    arg.kind = KernelArg::Kind::kBuffer;
    arg.buffer = h;
    args.push_back(arg);
    if (a.role == ArgRole::kOut) continue;
    HostBuffer drawn = GenerateInput(a, env, seed);
    if (Probed(a)) {
      SplitForProbe(drawn, lower_bits, AllowedBits(task_.precision), seed + i, &high[i], &full[i]);
      any_probed = true;
    } else {
      high[i] = full[i] = std::move(drawn);
    }
  }
  if (!any_probed) return true;
  // The candidate's scratch buffers after the task's arguments (the reference takes none).
  std::vector<DeviceBuffer> scratch;
  std::vector<KernelArg> candidate_args = args;
  for (size_t i = 0; i < scratch_counts.size(); ++i) {
    const size_t bytes = std::max<size_t>(
        static_cast<size_t>(scratch_counts[i]) * DTypeSize(kernel.scratch[i].dtype), 4);
    BufferHandle h = 0;
    Must(device_.Alloc(bytes, &h), "allocating a probe buffer");
    scratch.emplace_back(&device_, h, bytes);
    candidate_args.push_back({.kind = KernelArg::Kind::kBuffer, .buffer = h});
  }
  auto run = [&](std::span<const LaunchStep> l, const std::vector<HostBuffer>& inputs,
                 bool candidate, std::vector<double>* out) -> LaunchResult {
    for (size_t i = 0; i < scratch.size(); ++i) {
      Must(device_.Fill(scratch[i].handle(), PoisonPattern(kernel.scratch[i].dtype),
                        scratch[i].bytes()),
           "poisoning a scratch buffer");
    }
    for (size_t i = 0; i < task_.args.size(); ++i) {
      const ArgSpec& a = task_.args[i];
      if (!a.is_buffer) continue;
      if (a.role == ArgRole::kOut) {
        Must(device_.Fill(buffers[i].handle(), PoisonPattern(a.dtype), buffers[i].bytes()),
             "poisoning an output");
      } else {
        Must(device_.Write(buffers[i].handle(), inputs[i].bytes.data(), inputs[i].bytes.size()),
             "uploading an input");
      }
    }
    if (candidate) {
      CandidatePhase(static_cast<int>(l.size()), l);
    } else {
      Phase(EvalPhase::kHost, 1, "reference");
    }
    LaunchResult r = device_.Run(l, candidate ? candidate_args : args);
    Phase(EvalPhase::kHost);
    if (!r.status.ok()) return r;
    out->clear();
    for (size_t i = 0; i < task_.args.size(); ++i) {
      const ArgSpec& a = task_.args[i];
      if (!a.is_buffer || a.role == ArgRole::kIn) continue;
      std::vector<std::byte> bytes(buffers[i].bytes());
      Must(device_.Read(buffers[i].handle(), bytes.data(), bytes.size()), "reading an output");
      const size_t count = static_cast<size_t>(ElementCount(a, env));
      for (size_t e = 0; e < count; ++e) out->push_back(LoadElement(bytes.data(), a.dtype, e));
    }
    return r;
  };
  std::vector<double> cand_full, cand_high, ref_full, ref_high;
  for (auto [inputs, out] : {std::pair{&full, &cand_full}, std::pair{&high, &cand_high}}) {
    LaunchResult c = run(steps, *inputs, true, out);
    if (!c.status.ok()) return LaunchFailed(ev, c.status.message(), steps, device_.info(), where);
  }
  const std::vector<LaunchStep> ref_steps =
      MakeSteps(reference_->kernel, reference_->loaded, reference_->config, env);
  for (auto [inputs, out] : {std::pair{&full, &ref_full}, std::pair{&high, &ref_high}}) {
    LaunchResult r = run(ref_steps, *inputs, false, out);
    if (!r.status.ok())
      throw ToolError("the task's reference kernel failed: " + r.status.message());
  }
  for (auto* list : {&buffers, &scratch}) {
    for (DeviceBuffer& b : *list)
      if (b.handle()) Must(device_.Fill(b.handle(), 0, b.bytes()), "scrubbing a probe buffer");
  }
  Must(device_.Synchronize(), "scrubbing the probe's buffers");
  const ProbeReading reading = ReadProbe(cand_full, cand_high, ref_full, ref_high);
  if (!reading.Lost()) return true;
  return Fail(
      ev, Status::kIncorrect,
      fmt::format("computes below the task's precision '{}': on inputs whose last {} "
                  "significand bits only {} keeps, its output followed {:.0f}% of the "
                  "reference's change (it rounds its operands to {} bits or fewer, as "
                  "TF32, fp16 or bf16 do) ({})",
                  task_.precision, AllowedBits(task_.precision) - lower_bits, task_.precision,
                  100.0 * std::max(0.0, 1.0 - reading.candidate_missed / reading.reference_moved),
                  lower_bits, where));
}

}  // namespace kf
