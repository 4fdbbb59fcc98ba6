// libFuzzer target for the two parsers of user files: the task loader (task.toml) and the kernel
// annotation parser (// @kernel, @grid, @param...). Every input is tried as both. Only InputError
// may leave a parser; any other exception, a crash or a sanitizer report is a bug. A task the
// loader accepts must also evaluate, at every size set, everything the loader vouched for.
// Built and run by bench/fuzz_parsers.sh (clang++ -fsanitize=fuzzer,address,undefined).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/input_error.hpp"
#include "core/kernel.hpp"
#include "core/task.hpp"

#ifndef KF_FUZZ_TASK_DIR
#error "define KF_FUZZ_TASK_DIR: the folder whose kernel files the fuzzed task.toml may name"
#endif

namespace {

void FuzzTask(std::string_view text) {
  kf::Task task;
  try {
    task = kf::LoadTaskFromText(KF_FUZZ_TASK_DIR, text);
  } catch (const kf::InputError&) {
    return;
  }
  // The loader checked these at every size set: an ExprError here is a loader bug.
  for (const auto* sets : {&task.check_sizes, &task.bench_sizes}) {
    for (const kf::SizeSet& set : *sets) {
      kf::Env env = kf::SizesEnv(set.sizes);
      for (const kf::ArgSpec& a : task.args) {
        if (a.is_buffer) {
          kf::ElementCount(a, env);
        } else {
          a.value.Eval(env);
        }
      }
      task.min_bytes.Eval(env);
      if (task.flops) task.flops->Eval(env);
    }
  }
  task.BenchSizes("", "gpu");
  task.Languages();
}

void FuzzKernel(const std::string& text, const kf::Task& task) {
  kf::Kernel k;
  try {
    k = kf::ParseKernel("fuzz.cl", text);
  } catch (const kf::InputError&) {
    return;
  }
  // What the evaluator does next with a kernel: its default configuration, the source with the
  // defaults written back, the launch rule and constraints at a size set (where an ExprError is
  // an expected verdict, invalid_config), and the signature check.
  kf::Config config = k.ResolveConfig({});
  kf::WithDefaults(k, config);
  kf::Env env = kf::SizesEnv(task.check_sizes.front().sizes);
  kf::BindConfig(config, env);
  std::vector<const kf::Expr*> exprs;
  for (const kf::LaunchRule& l : k.launches) {
    for (const auto* list : {&l.grid, &l.block})
      for (const kf::Expr& e : *list) exprs.push_back(&e);
    if (l.shared) exprs.push_back(&*l.shared);
  }
  for (const kf::Expr& e : k.constraints) exprs.push_back(&e);
  for (const kf::ScratchSpec& s : k.scratch) exprs.push_back(&s.count);
  for (const kf::Expr* e : exprs) {
    try {
      e->Eval(env);
    } catch (const kf::ExprError&) {
    }
  }
  try {
    kf::CheckKernelSignature(task, k);
  } catch (const kf::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kf::Task rope = kf::LoadTask(KF_FUZZ_TASK_DIR);
  std::string text(reinterpret_cast<const char*>(data), size);
  FuzzTask(text);
  FuzzKernel(text, rope);
  return 0;
}
