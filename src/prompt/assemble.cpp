#include "prompt/assemble.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/codec.hpp"
#include "core/task.hpp"

namespace kf {

namespace {

std::string LanguageWords(Language l) {
  return l == Language::kCuda ? "CUDA C++ (compiled with NVRTC)" : "OpenCL C 1.2";
}

std::string Fence(Language l) {
  return l == Language::kCuda ? "cuda" : "c";
}

std::string Block(Language l, const std::string& source) {
  return fmt::format("```{}\n{}{}```\n", Fence(l), source,
                     !source.empty() && source.back() == '\n' ? "" : "\n");
}

std::string TaskSection(const Task& task, const ProposalRequest& r) {
  nlohmann::json t = TaskToJson(task, r.language);
  std::string out =
      fmt::format("## The task: {} ({})\n{}\n\nArguments of the entry point, in order:\n",
                  t.value("name", ""), t.value("op_class", ""), t.value("description", ""));
  for (const auto& a : t["args"]) {
    if (a.value("kind", "") == "scalar") {
      out +=
          fmt::format("- `{}`: scalar {} = {}\n", a.value("name", ""), a.value("dtype", ""),
                      a["value"].is_string() ? a["value"].get<std::string>() : a["value"].dump());
    } else {
      out += fmt::format("- `{}`: {} buffer of shape {} ({})\n", a.value("name", ""),
                         a.value("dtype", ""), a["shape"].dump(), a.value("role", ""));
    }
  }
  auto sizes = [](const nlohmann::json& sets) {
    std::string s;
    for (const auto& set : sets)
      s += fmt::format("  - {}: {}\n", set.value("name", ""), set["sizes"].dump());
    return s;
  };
  out += "\nSizes it is timed at:\n" + sizes(t["bench_sizes"]);
  out += "Sizes it is checked at (ragged ones included: guard every access):\n" +
         sizes(t["check_sizes"]);
  out += fmt::format("Tolerance: atol {}, rtol {}. Bytes it must move at least: {}\n",
                     t["tolerance"]["atol"].get<std::string>(),
                     t["tolerance"]["rtol"].get<std::string>(), t.value("min_bytes", ""));
  return out;
}

std::string ReferenceSection(const Task& task, const ProposalRequest& r, size_t limit) {
  nlohmann::json t = TaskToJson(task, r.language);
  std::string source = t.value("reference_source", "");
  if (source.empty()) return "";
  if (t.value("reference_language", "") == "python") {
    std::string body = CutMiddle(source, limit);
    return fmt::format(
        "## The reference: a PyTorch module in KernelBench's form (the exact semantics; the "
        "kernel computes its forward, with the arguments listed above)\n```python\n{}{}```\n",
        body, body.back() == '\n' ? "" : "\n");
  }
  return "## The reference kernel (the exact semantics; slow)\n" +
         Block(r.language, CutMiddle(source, limit));
}

std::string DeviceSection(const ProposalRequest& r) {
  const DeviceInfo& d = r.device;
  std::string out = fmt::format(
      "## The device: {} ({}, {})\n{} compute units, work-groups up to {}, {} bytes of local "
      "memory per group, sub-group (warp) width {}",
      d.name, d.backend, d.arch, d.compute_units, d.max_work_group_size, d.local_mem_bytes,
      d.sub_group_width);
  if (r.peak_bandwidth_gbs > 0)
    out += fmt::format(", measured copy bandwidth {:.0f} GB/s", r.peak_bandwidth_gbs);
  out += ".\n";
  if (!r.rule_hints.empty()) {
    out += "Hardware hints:\n";
    for (const std::string& h : r.rule_hints) out += "- " + h + "\n";
  }
  return out;
}

std::string EvaluationWords(const Evaluation& e, size_t log_chars) {
  std::string out = fmt::format("status {}", StatusName(e.status));
  if (!e.reason.empty()) out += fmt::format(" ({})", e.reason);
  if (e.time) out += fmt::format("; {:.4g} ms", e.time->median_ms);
  if (e.speedup) out += fmt::format("; {:.3g}x the baseline", *e.speedup);
  if (e.bandwidth_gbs) out += fmt::format("; {:.0f} GB/s", *e.bandwidth_gbs);
  if (e.roofline_fraction)
    out += fmt::format("; {:.0f}% of the bandwidth floor", 100 * *e.roofline_fraction);
  if (e.status != Status::kOk && e.max_abs_err > 0)
    out += fmt::format("; max abs error {:.3g}, bad ratio {:.3g}", e.max_abs_err, e.bad_ratio);
  out += ".\n";
  for (const std::string& h : e.hints) out += "- hint: " + h + "\n";
  if (!e.compile_log.empty())
    out += "Compiler log (excerpt):\n```\n" + CutMiddle(e.compile_log, log_chars) + "\n```\n";
  return out;
}

std::string EliteSection(const ProposalRequest& r, const std::string& title, const Elite& e,
                         size_t log_chars, size_t source_chars) {
  std::string out =
      fmt::format("## {}: {} in cell [{}]\nOrigin: {}. Best configuration {}. Measured: ", title,
                  e.kernel_id, DescribeCell(r, e.cell), e.origin, ConfigToJson(e.config).dump());
  out += EvaluationWords(e.evaluation, log_chars);
  if (source_chars > 0) out += Block(r.language, CutMiddle(e.kernel.source, source_chars));
  return out;
}

std::string TargetSection(const ProposalRequest& r) {
  if (!r.target) return "";
  std::string out = fmt::format("## What to write\nA kernel whose strategy belongs in cell [{}]",
                                r.target->description);
  out += r.target->speedup > 0
             ? fmt::format(", whose best so far runs at {:.3g}x the baseline: beat it.\n",
                           r.target->speedup)
             : ": no kernel of that kind has been found yet.\n";
  out +=
      "Change the strategy, not just constants: a copy of the parent with new numbers is worth "
      "little. Expose what should be tuned as @param lists; a tuner times their values.\n";
  return out;
}

std::string GuidanceSection(const std::vector<const Component*>& components) {
  if (components.empty()) return "";
  std::string out = "## Guidance\n";
  for (const Component* c : components) out += fmt::format("### {}\n{}\n", c->id, c->text);
  return out;
}

std::string FormatSection(const ProposalRequest& r, bool search_replace) {
  std::string rules =
      r.language == Language::kCuda
          ? "CUDA: an `extern \"C\" __global__` entry point (or C++; it is found through NVRTC); "
            "`#include <cuda_fp16.h>` works; no host code, no other includes."
          : "OpenCL C 1.2: a `__kernel` entry point; read and write half buffers with "
            "vload_half/vstore_half_rte (or vload_halfN/vstore_halfN_rte); no host code.";
  std::string annotations =
      "// @kernel NAME                 the entry point\n"
      "// @grid EXPR[, EXPR[, EXPR]]   work-groups per dimension: the task's sizes and the "
      "parameters, ceil_div(a, b), //, *, +, -\n"
      "// @block EXPR[, ...]           work-items per group, as many dimensions as @grid\n"
      "// @param NAME in [V1, V2, ...] default V   tunable: reaches the source as #define NAME\n"
      "// @constraint EXPR             optional: configurations that violate it are skipped\n";
  if (r.language == Language::kCuda) {
    annotations +=
        "// @shared EXPR                optional: bytes of dynamic shared memory per block "
        "(`extern __shared__`), like @grid; may exceed 48 KB up to the device's limit\n";
  }
  std::string out = "## Answer format\n" + rules + "\n";
  if (search_replace) {
    out +=
        "Answer with SEARCH/REPLACE blocks against the parent kernel above; each SEARCH copies "
        "lines of the parent exactly, and the blocks are applied in order:\n"
        "<<<<<<< SEARCH\n(lines of the parent)\n=======\n(their replacement)\n>>>>>>> REPLACE\n"
        "Before the blocks, say in two or three sentences what you changed and why.\n";
  } else {
    out +=
        "Answer with one fenced code block holding the complete kernel file, annotations "
        "first:\n```\n" +
        annotations +
        "```\nBefore the code block, say in two or three sentences what you changed and "
        "why.\n";
  }
  return out;
}

}  // namespace

size_t PromptCharsFor(int context_tokens, int reply_tokens) {
  long long left = static_cast<long long>(context_tokens) - reply_tokens;
  return static_cast<size_t>(std::max<long long>(left, 1024) * 4 * 9 / 10);
}

std::string DescribeCell(const ProposalRequest& request, const Cell& cell) {
  std::string out;
  for (size_t d = 0; d < cell.size(); ++d) {
    if (!out.empty()) out += "; ";
    if (d < request.behaviour.size()) {
      const auto& [name, levels] = request.behaviour[d];
      int level = cell[d];
      out += name + ": " +
             (level >= 0 && level < static_cast<int>(levels.size()) ? levels[level]
                                                                    : std::to_string(level));
    } else {
      out += std::to_string(cell[d]);
    }
  }
  return out;
}

std::string CutMiddle(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t keep = limit > 80 ? limit - 80 : limit;
  size_t head = keep * 2 / 3, tail = keep - head;
  return text.substr(0, head) +
         fmt::format("\n[... {} characters left out ...]\n", text.size() - head - tail) +
         text.substr(text.size() - tail);
}

ChatPrompt AssemblePrompt(const Task& task, const ProposalRequest& r,
                          const std::vector<const Component*>& components,
                          const PromptSettings& settings) {
  ChatPrompt p;
  p.system = fmt::format(
      "You are an expert GPU kernel engineer. You write {} kernels that are correct at every "
      "size and as fast as the hardware allows. Your kernel is compiled, checked against a "
      "reference at several sizes and timed on the real device.",
      LanguageWords(r.language));
  // Sections in the order the model reads them; cut in the order of `cuts` when too long.
  size_t log = settings.log_chars, source = settings.max_chars / 4, reference = source;
  size_t inspiration_source = source / 2;
  bool with_best = r.best.has_value();
  for (int attempt = 0;; ++attempt) {
    std::string user = TaskSection(task, r) + "\n" + ReferenceSection(task, r, reference) + "\n" +
                       DeviceSection(r) + "\n";
    if (r.parent)
      user += EliteSection(r, "The kernel to improve (the parent)", *r.parent, log, source) + "\n";
    if (with_best) user += EliteSection(r, "The best kernel so far", *r.best, log, source) + "\n";
    for (const Elite& e : r.inspirations)
      user += EliteSection(r, "Another cell's kernel", e, log / 2, inspiration_source) + "\n";
    user += TargetSection(r) + "\n" + GuidanceSection(components) + "\n" +
            FormatSection(r, settings.search_replace);
    if (user.size() + p.system.size() <= settings.max_chars || attempt >= 6) {
      p.user = user.size() + p.system.size() <= settings.max_chars
                   ? user
                   : CutMiddle(user, settings.max_chars - p.system.size());
      return p;
    }
    // Too long: drop what is needed least first.
    if (inspiration_source > 0) {
      inspiration_source = 0;
    } else if (with_best) {
      with_best = false;
    } else if (log > 200) {
      log = 200;
    } else if (reference > 1000) {
      reference = 1000;
    } else {
      source = std::max<size_t>(source / 2, 1000);
    }
  }
}

std::string RepairRequest(const std::string& problem, bool search_replace) {
  return fmt::format(
      "Your answer could not be used: {}. Answer again, in the format asked for: {}.", problem,
      search_replace ? "SEARCH/REPLACE blocks whose SEARCH lines copy the parent exactly"
                     : "one fenced code block holding the complete kernel file, annotations "
                       "(@kernel, @grid, @block, @param) first");
}

}  // namespace kf
