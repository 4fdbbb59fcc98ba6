// Task variants (issue 33): `[variants.NAME]` in task.toml, loaded as TASK.NAME. Applying one
// changes the named element types, precision, tolerance fields and template lists and gives the
// kernels its defines; a defect in a variant is an error naming task.toml's line and the field.
#include "core/task_variant.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/input_error.hpp"
#include "core/task.hpp"
#include "core/task_library.hpp"

namespace kf {
namespace {

const std::string kGemm = std::string(KF_TASKS) + "/gemm_f16";

std::string GemmToml() {
  std::ifstream in(kGemm + "/task.toml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// gemm_f16's task.toml with `from` replaced by `to` (which must be there).
std::string Edited(const std::string& from, const std::string& to) {
  std::string text = GemmToml();
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// "task.toml:LINE: " of the first line of `text` holding `needle`.
std::string At(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
  return "task.toml:" + std::to_string(line) + ": ";
}

std::string ErrorOf(const std::string& text, const std::string& variant) {
  try {
    LoadTaskFromText(kGemm, text, variant);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TaskVariant, Bf16OfGemmF16ChangesWhatItNamesAndKeepsTheRest) {
  const Task base = LoadTask(kGemm);
  const Task bf16 = LoadTask(kGemm, "bf16");
  EXPECT_EQ(base.variants, std::vector<std::string>{"bf16"});
  EXPECT_EQ(bf16.variants, base.variants);
  EXPECT_EQ(base.variant, "");
  EXPECT_TRUE(base.defines.empty());
  EXPECT_EQ(bf16.name, "gemm_f16.bf16");
  EXPECT_EQ(bf16.variant, "bf16");
  EXPECT_EQ(bf16.dir, base.dir);
  EXPECT_EQ(bf16.id, base.id + ".bf16");  // another task from the same folder
  EXPECT_EQ(bf16.defines, (Config{{"KF_BF16", "1"}}));
  EXPECT_EQ(base.precision, "fp16-accumulate-fp32");
  EXPECT_EQ(bf16.precision, "bf16-accumulate-fp32");
  EXPECT_NE(bf16.description, base.description);
  ASSERT_EQ(bf16.args.size(), base.args.size());
  for (size_t i = 0; i < base.args.size(); ++i) {
    const bool matrix = i < 3;  // A, B, C
    EXPECT_EQ(base.args[i].dtype, matrix ? DType::kF16 : DType::kI32) << base.args[i].name;
    EXPECT_EQ(bf16.args[i].dtype, matrix ? DType::kBF16 : DType::kI32) << base.args[i].name;
  }
  // atol and rtol replaced; max_bad_ratio, not named, kept.
  EXPECT_EQ(bf16.tolerance.rtol.text(), "0.01");
  EXPECT_NE(base.tolerance.rtol.text(), bf16.tolerance.rtol.text());
  EXPECT_EQ(bf16.tolerance.max_bad_ratio, base.tolerance.max_bad_ratio);
  // Template lists replaced per language; reference and baseline are the task's.
  EXPECT_EQ(
      bf16.templates.at(Language::kCuda),
      (std::vector<std::string>{"gemm_wgmma.cu", "gemm_wgmma_ws.cu", "gemm_wgmma_persistent.cu"}));
  EXPECT_TRUE(bf16.templates.at(Language::kOpenCL).empty());
  EXPECT_GT(base.templates.at(Language::kOpenCL).size(), 0u);
  EXPECT_EQ(bf16.reference, base.reference);
  EXPECT_EQ(bf16.baseline, base.baseline);
  EXPECT_EQ(bf16.check_sizes.size(), base.check_sizes.size());
}

TEST(TaskVariant, FoundByNameOrFolderWithTheVariantAfterADot) {
  setenv("KF_TASKS_DIR", KF_TASKS, 1);
  EXPECT_EQ(FindTask("gemm_f16.bf16").name, "gemm_f16.bf16");
  EXPECT_EQ(FindTask(kGemm + ".bf16").name, "gemm_f16.bf16");
  EXPECT_EQ(FindTask("gemm_f16").name, "gemm_f16");
  EXPECT_EQ(SplitTaskVariant("a/b.c/task.v"),
            (std::pair<std::string, std::string>{"a/b.c/task", "v"}));
  EXPECT_EQ(SplitTaskVariant("./t"), (std::pair<std::string, std::string>{"./t", ""}));
  EXPECT_EQ(SplitTaskVariant("t."), (std::pair<std::string, std::string>{"t.", ""}));
  try {
    FindTask("gemm_f16.fp8");
    FAIL() << "an unknown variant loaded";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(kGemm + "/task.toml:"), std::string::npos) << what;
    EXPECT_NE(what.find("variants: no variant 'fp8' (variants: bf16)"), std::string::npos) << what;
  }
  // A task without variants says so.
  EXPECT_NE(ErrorOf(GemmToml().substr(0, GemmToml().find("[variants.bf16]")), "bf16")
                .find("no variant 'bf16': the task declares none"),
            std::string::npos);
}

TEST(TaskVariant, DefectsNameTheFileLineAndField) {
  const std::string types = "types = { A = \"bf16\", B = \"bf16\", C = \"bf16\" }";
  std::string text = Edited(types, "types = { A = \"bf16\", X = \"bf16\" }");
  // Checked when the task is loaded as written, too: a broken variant is not left for later.
  for (const char* variant : {"", "bf16"}) {
    const std::string e = ErrorOf(text, variant);
    EXPECT_NE(e.find(At(text, "X = ") + "variants.bf16.types.X: no argument 'X'"),
              std::string::npos)
        << e;
  }
  text = Edited(types, "types = { A = \"bf17\" }");
  EXPECT_NE(ErrorOf(text, "").find(At(text, "bf17") + "variants.bf16.types.A: expected an element"),
            std::string::npos);
  text = Edited("defines = { KF_BF16 = 1 }", "defines = { KF_BF16 = 1 }\ncolour = 1");
  EXPECT_NE(ErrorOf(text, "").find(At(text, "colour") + "variants.bf16.colour: unknown key"),
            std::string::npos)
      << ErrorOf(text, "");
  text = Edited("defines = { KF_BF16 = 1 }", "defines = { KF_BF16 = 1 }\nvariants = { x = {} }");
  EXPECT_NE(ErrorOf(text, "").find(At(text, "variants = {") + "variants.bf16.variants: a variant "
                                                              "has no variants of its own"),
            std::string::npos)
      << ErrorOf(text, "");
  text = Edited("defines = { KF_BF16 = 1 }", "defines = { 9X = 1 }");
  EXPECT_NE(ErrorOf(text, "").find("variants.bf16.defines"), std::string::npos);
  // A variant of a variant, asked for by name.
  text = GemmToml();
  EXPECT_NE(ErrorOf(text, "bf16.x")
                .find(At(text, "[variants.bf16]") + "variants.bf16: 'bf16.x' "
                                                    "asks for a variant of the "
                                                    "variant 'bf16'"),
            std::string::npos)
      << ErrorOf(text, "bf16.x");
}

// What the variant changes is checked as the task's own fields are, at the variant's lines.
TEST(TaskVariant, AppliedFieldsAreCheckedWhereTheVariantWritesThem) {
  std::string text = Edited("precision = \"bf16-accumulate-fp32\"", "precision = \"bf17\"");
  std::string e = ErrorOf(text, "bf16");
  EXPECT_NE(e.find(At(text, "precision = \"bf17\"") + "precision: expected"), std::string::npos)
      << e;
  EXPECT_EQ(ErrorOf(text, ""), "") << "the task as written does not use the variant's precision";
  text = Edited("tolerance = { atol = 1e-2, rtol = 1e-2 }", "tolerance = { atol = -1 }");
  e = ErrorOf(text, "bf16");
  EXPECT_NE(e.find(At(text, "atol = -1") + "tolerance.atol: "), std::string::npos) << e;
  text = Edited("opencl = [] }", "opencl = [\"missing.cl\"] }");
  e = ErrorOf(text, "bf16");
  EXPECT_NE(e.find(At(text, "missing.cl") + "kernels.templates.opencl: file 'missing.cl' does not"),
            std::string::npos)
      << e;
  // A scalar made bf16 is refused like a scalar declared bf16.
  text = Edited("C = \"bf16\" }", "C = \"bf16\", M = \"bf16\" }");
  e = ErrorOf(text, "bf16");
  EXPECT_NE(e.find(At(text, "M = \"bf16\"") + "args.M.type: a bf16 scalar"), std::string::npos)
      << e;
}

}  // namespace
}  // namespace kf
