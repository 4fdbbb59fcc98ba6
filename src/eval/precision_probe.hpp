#pragma once
// The precision probe's inputs and its reading of the outputs. A task's `precision` ("fp32",
// "tf32", ...) pins the arithmetic its candidates may use; on ordinary inputs the tolerance cannot
// tell an fp32 GEMM from one on TF32 or fp16 units. The probe draws each fp32 input as h + l,
// where h keeps only the significand bits of the next lower class and l lies below half of h's
// last bit in that class, and runs the candidate on h + l and on h alone. A candidate that keeps
// the task's precision sees l, and its two outputs differ as the reference's do; one that rounds
// its operands to the lower class sees h twice, and its outputs do not move.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/inputs.hpp"

namespace kf {

// The significand bits (implicit bit included) of the class just below `precision`, whose use the
// probe detects: 11 (TF32, fp16) below "fp32", 8 (bf16) below "tf32"; 0 where no probe applies
// (a precision pinned on fp16 or bf16 inputs: their operands have no lower bits to lose).
int ProbedLowerBits(const std::string& precision);
// The significand bits the precision keeps for an fp32 operand: 24 for "fp32", 11 for "tf32".
int AllowedBits(const std::string& precision);

// `v` rounded to `bits` significand bits, to nearest, ties to even.
double RoundToBits(double v, int bits);

// The probe's pair of inputs from one drawn fp32 buffer: `high` (every element on the lower
// class's grid) and `full` (high plus a part only `allowed_bits` keep), as fp32 buffers.
void SplitForProbe(const HostBuffer& drawn, int lower_bits, int allowed_bits, uint64_t seed,
                   HostBuffer* high, HostBuffer* full);

// What the four output sets say: the candidate's and the reference's on the full and the high
// inputs (all fp32/f16/f64 elements as doubles).
struct ProbeReading {
  double reference_moved = 0;   // sum |ref(full) - ref(high)|
  double candidate_missed = 0;  // sum |(cand(full) - cand(high)) - (ref(full) - ref(high))|
  double candidate_error = 0;   // sum |cand(full) - ref(full)| / sum |ref(full)|
  bool finite = true;           // every candidate element finite
  // The candidate roughly computes the function (its relative error is small), yet its output did
  // not follow the low bits: it computed below the task's precision.
  bool Lost() const {
    return finite && reference_moved > 0 && candidate_error < 0.05 &&
           candidate_missed > 0.5 * reference_moved;
  }
};

ProbeReading ReadProbe(const std::vector<double>& cand_full, const std::vector<double>& cand_high,
                       const std::vector<double>& ref_full, const std::vector<double>& ref_high);

}  // namespace kf
