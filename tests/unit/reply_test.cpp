// What a model's reply holds: a whole kernel from the right fenced block, SEARCH/REPLACE edits
// applied to the parent, a whole file where edits were asked for (and the reverse), the notes
// around the code, and every kind of unusable reply (no code, cut off, edits that do not match).
#include "propose/llm/reply.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kf {
namespace {

const std::string kParent =
    "// @kernel scale\n"
    "// @grid ceil_div(N, 256)\n"
    "// @block 256\n"
    "__kernel void scale(__global float* x, int N) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= N) return;\n"
    "  x[i] = x[i] * 2.0f;\n"
    "}\n";

const std::string kVectorised =
    "// @kernel scale\n"
    "// @grid ceil_div(N, 4 * BLOCK)\n"
    "// @block BLOCK\n"
    "// @param BLOCK in [64, 128, 256] default 128\n"
    "__kernel void scale(__global float* x, int N) {\n"
    "  int i = get_global_id(0) * 4;\n"
    "  if (i + 3 < N) vstore4(vload4(0, x + i) * 2.0f, 0, x + i);\n"
    "  else for (; i < N; ++i) x[i] *= 2.0f;\n"
    "}\n";

KernelReply Full(const std::string& reply, const std::string& finish = "stop") {
  return ReadKernelReply(reply, finish, ReplyFormat::kFullFile, kParent);
}

KernelReply Edits(const std::string& reply, const std::string& finish = "stop") {
  return ReadKernelReply(reply, finish, ReplyFormat::kSearchReplace, kParent);
}

TEST(KernelReply, FullFileTakesTheFencedKernel) {
  for (const char* info : {"", "cuda", "c", "cpp", "opencl", "cl", "c++"}) {
    KernelReply r = Full("Vectorised by 4.\n\n```" + std::string(info) + "\n" + kVectorised +
                         "```\n\nThe tail is scalar.\n");
    EXPECT_EQ(r.error, "") << info;
    EXPECT_EQ(r.source, kVectorised) << info;
    EXPECT_EQ(r.notes, "Vectorised by 4.\n\nThe tail is scalar.") << info;
    EXPECT_FALSE(r.edited);
  }
}

TEST(KernelReply, FullFilePrefersTheBlockWithAKernelAnnotation) {
  std::string reply =
      "Launch with:\n```bash\nkfoundry eval task kernel.cl --set BLOCK=128 -v\n```\n"
      "The kernel:\n```opencl\n" +
      kVectorised +
      "```\nA helper:\n```c\n"
      "static inline float twice(float v) { return 2 * v; }\n"
      "static inline float thrice(float v) { return 3 * v; }\n```\n";
  KernelReply r = Full(reply);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.source, kVectorised);
  EXPECT_EQ(r.notes, "Launch with:\n\nThe kernel:\n\nA helper:");
  // Of several, the last one (the answer after the model quotes its parent).
  r = Full("Before:\n```\n" + kParent + "```\nAfter:\n```\n" + kVectorised + "```\n");
  EXPECT_EQ(r.source, kVectorised);
}

TEST(KernelReply, FullFileFallsBackToTheLongestBlock) {
  KernelReply r = Full("```\nshort\n```\n```\na longer block\nof two lines\n```\n");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.source, "a longer block\nof two lines\n");
}

TEST(KernelReply, NoCodeBlock) {
  KernelReply r = Full("I think the kernel is already optimal.");
  EXPECT_EQ(r.error, "no code block in the reply");
  EXPECT_EQ(r.source, "");
  EXPECT_EQ(r.notes, "I think the kernel is already optimal.");
  EXPECT_EQ(Full("").error, "no code block in the reply");
}

TEST(KernelReply, TruncatedReplies) {
  std::string cut = "Here it is:\n```opencl\n" + kVectorised.substr(0, 120);
  EXPECT_EQ(Full(cut, "length").error, "the reply was cut off (finish_reason length)");
  EXPECT_EQ(Full(cut, "stop").error, "the code block is not closed: the reply was cut off");
  EXPECT_EQ(Full(cut, "length").source, "");
  // Cut off in the prose after a complete kernel: the kernel is usable.
  KernelReply r = Full("```\n" + kVectorised + "```\nThis works because", "length");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.source, kVectorised);
  // Cut off before any code.
  EXPECT_EQ(Full("Let me think about the memory access", "length").error,
            "the reply was cut off (finish_reason length)");
  EXPECT_EQ(Full("<think>first the loads, then", "length").error,
            "the reply was cut off (finish_reason length)");
}

TEST(KernelReply, ThinkingIsIgnored) {
  KernelReply r = Full("<think>maybe\n```\n// @kernel draft\n```\n</think>\nFinal:\n```\n" +
                       kVectorised + "```\n");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.source, kVectorised);
  EXPECT_EQ(r.notes, "Final:");
  r = Full("only the end of thinking shows</think>```\n" + kVectorised + "```\n");
  EXPECT_EQ(r.source, kVectorised);
}

TEST(KernelReply, SearchReplaceAppliesEditsToTheParent) {
  KernelReply r = Edits(
      "Scale by 3 instead.\n```opencl\n<<<<<<< SEARCH\n  x[i] = x[i] * 2.0f;\n=======\n"
      "  x[i] = x[i] * 3.0f;\n>>>>>>> REPLACE\n```\n");
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.edited);
  EXPECT_NE(r.source.find("x[i] = x[i] * 3.0f;"), std::string::npos);
  EXPECT_NE(r.source.find("// @kernel scale"), std::string::npos);
  EXPECT_EQ(r.notes, "Scale by 3 instead.");
  // Unfenced, indented differently, two blocks.
  r = Edits(
      "<<<<<<< SEARCH\nint i = get_global_id(0);\n=======\nconst int i = get_global_id(0);\n"
      ">>>>>>> REPLACE\nand\n<<<<<<< SEARCH\n// @block 256\n=======\n// @block 256\n"
      "// extra\n>>>>>>> REPLACE\n");
  EXPECT_EQ(r.error, "");
  EXPECT_NE(r.source.find("\n  const int i = get_global_id(0);\n"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("// @block 256\n// extra\n"), std::string::npos) << r.source;
  EXPECT_EQ(r.notes, "and");
}

TEST(KernelReply, SearchReplaceAcceptsAWholeFile) {
  KernelReply r = Edits("Rewritten:\n```cl\n" + kVectorised + "```\n");
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(r.edited);
  EXPECT_EQ(r.source, kVectorised);
}

TEST(KernelReply, FullFileAcceptsEdits) {
  KernelReply r = Full(
      "<<<<<<< SEARCH\n  x[i] = x[i] * 2.0f;\n=======\n  x[i] *= 2.0f;\n"
      ">>>>>>> REPLACE\n");
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.edited);
  EXPECT_NE(r.source.find("x[i] *= 2.0f;"), std::string::npos);
  // Fenced edits whose SEARCH names @kernel are still edits, not a file.
  r = Full(
      "```\n<<<<<<< SEARCH\n// @kernel scale\n=======\n// @kernel scale\n// note\n"
      ">>>>>>> REPLACE\n```\n");
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.edited);
  EXPECT_TRUE(r.source.starts_with("// @kernel scale\n// note\n// @grid")) << r.source;
}

TEST(KernelReply, SearchReplaceErrors) {
  KernelReply r = Edits("<<<<<<< SEARCH\n  y = 1;\n=======\n  y = 2;\n>>>>>>> REPLACE\n");
  EXPECT_EQ(r.error, "SEARCH block 1 matches nothing in the parent: \"y = 1;\"");
  EXPECT_EQ(r.source, "");
  EXPECT_EQ(Edits("Nothing to change.").error, "no SEARCH/REPLACE block in the reply");
  EXPECT_EQ(Edits("<<<<<<< SEARCH\n  x[i] = x[i] * 2.0f;\n=======\n  x[i]", "length").error,
            "the reply was cut off (finish_reason length)");
  EXPECT_EQ(Edits("<<<<<<< SEARCH\n  x[i] = x[i] * 2.0f;\n=======\n  x[i]").error,
            "SEARCH/REPLACE block 1 is not closed (the reply was cut off?)");
  EXPECT_EQ(Edits("<<<<<<< SEARCH\nint i\n>>>>>>> REPLACE\n").error,
            "SEARCH/REPLACE block 1 has no ======= line");
  EXPECT_EQ(Edits("```\n// @kernel scale\n__kernel void", "length").error,
            "the reply was cut off (finish_reason length)");
  EXPECT_EQ(Edits("x\n<<<<<<< SEARCH\nint\n=======\n", "max_tokens").error,
            "the reply was cut off (finish_reason max_tokens)");
}

TEST(KernelReply, NotesAreCapped) {
  std::string prose(5000, 'n');
  KernelReply r = Full(prose + "\n```\n" + kVectorised + "```\n");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.notes.size(), 2000u);
  // Never cut inside a UTF-8 character.
  std::string accents;
  for (int i = 0; i < 1500; ++i) accents += "\xc3\xa9";  // é
  r = Full(accents);
  EXPECT_LE(r.notes.size(), 2000u);
  EXPECT_EQ(r.notes.size() % 2, 0u);
}

}  // namespace
}  // namespace kf
