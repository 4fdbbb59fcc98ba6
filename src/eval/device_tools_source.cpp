// The source of the evaluator's own device kernels (device_tools.hpp), one text for CUDA and
// OpenCL: a preamble maps the words that differ (qualifiers, work-item indices, barriers, half
// conversions, arithmetic that must not be contracted into fused multiply-adds, so the host can
// reproduce every drawn element and every comparison bit for bit).
#include "eval/device_tools_source.hpp"

namespace kf {

const char* const kDeviceToolsSource = R"KFSRC(
#if KF_CUDA
#include <cuda_fp16.h>
typedef unsigned int uint;
typedef unsigned long long ulong;
typedef unsigned short ushort;
typedef unsigned char uchar;
#define KERNEL extern "C" __global__
#define GLOBAL
#define LOCAL __shared__
#define LID ((ulong)threadIdx.x)
#define GROUP ((ulong)blockIdx.x)
#define GROUPS ((ulong)gridDim.x)
#define LSIZE ((ulong)blockDim.x)
#define BARRIER __syncthreads()
#define INLINE __device__ inline
#define MULHI(a, b) __umulhi(a, b)
#define FADD(a, b) __fadd_rn(a, b)
#define FSUB(a, b) __fadd_rn(a, -(b))
#define FMUL(a, b) __fmul_rn(a, b)
#define DADD(a, b) __dadd_rn(a, b)
#define DSUB(a, b) __dadd_rn(a, -(b))
#define DMUL(a, b) __dmul_rn(a, b)
#define DDIV(a, b) __ddiv_rn(a, b)
#define ISNAN(x) isnan(x)
#define ISFINITE(x) isfinite(x)
INLINE float HalfToFloat(ushort h) { return __half2float(__ushort_as_half(h)); }
INLINE ushort FloatToHalf(float f) { return __half_as_ushort(__float2half_rn(f)); }
typedef double real;
#else
#pragma OPENCL FP_CONTRACT OFF
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif
#define KERNEL __kernel
#define GLOBAL __global
#define LOCAL __local
#define LID ((ulong)get_local_id(0))
#define GROUP ((ulong)get_group_id(0))
#define GROUPS ((ulong)get_num_groups(0))
#define LSIZE ((ulong)get_local_size(0))
#define BARRIER barrier(CLK_LOCAL_MEM_FENCE)
#define INLINE inline
#define MULHI(a, b) mul_hi(a, b)
#define FADD(a, b) ((a) + (b))
#define FSUB(a, b) ((a) - (b))
#define FMUL(a, b) ((a) * (b))
#define DADD(a, b) ((a) + (b))
#define DSUB(a, b) ((a) - (b))
#define DMUL(a, b) ((a) * (b))
#define DDIV(a, b) ((a) / (b))
#define ISNAN(x) isnan(x)
#define ISFINITE(x) isfinite(x)
INLINE float HalfToFloat(ushort h) { return vload_half(0, (const __private half*)&h); }
INLINE ushort FloatToHalf(float f) {
  ushort h;
  vstore_half_rte(f, 0, (__private half*)&h);
  return h;
}
#endif

#define KF_GROUP 256

// bfloat16 (the top half of a float; OpenCL has no type for it) in integer arithmetic, rounding to
// nearest even as the host's FloatToBFloat16 does, so both give the same bits.
#if KF_CUDA
#define AS_FLOAT(x) __uint_as_float(x)
#define AS_UINT(x) __float_as_uint(x)
#else
#define AS_FLOAT(x) as_float(x)
#define AS_UINT(x) as_uint(x)
#endif
INLINE float BFloat16ToFloat(ushort b) { return AS_FLOAT((uint)b << 16); }
INLINE ushort FloatToBFloat16(float f) {
  uint x = AS_UINT(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (ushort)(x >> 16);
}

// The element type: KF_DT 0 f16, 1 f32, 2 f64, 3 i32, 4 i64, 5 u8, 6 bf16.
#if KF_DT == 0
typedef ushort raw_t;
INLINE real Value(raw_t r) { return (real)HalfToFloat(r); }
INLINE raw_t FromFloat(float v) { return FloatToHalf(v); }
#elif KF_DT == 6
typedef ushort raw_t;
INLINE real Value(raw_t r) { return (real)BFloat16ToFloat(r); }
INLINE raw_t FromFloat(float v) { return FloatToBFloat16(v); }
#elif KF_DT == 1
typedef uint raw_t;
#if KF_CUDA
INLINE real Value(raw_t r) { return (real)__uint_as_float(r); }
INLINE raw_t FromFloat(float v) { return __float_as_uint(v); }
#else
INLINE real Value(raw_t r) { return (real)as_float(r); }
INLINE raw_t FromFloat(float v) { return as_uint(v); }
#endif
#elif KF_DT == 2
typedef ulong raw_t;
#if KF_CUDA
INLINE real Value(raw_t r) { return __longlong_as_double((long long)r); }
INLINE raw_t FromFloat(float v) { return (raw_t)__double_as_longlong((double)v); }
#else
INLINE real Value(raw_t r) { return as_double(r); }
INLINE raw_t FromFloat(float v) { return as_ulong((double)v); }
#endif
#elif KF_DT == 3
typedef uint raw_t;
INLINE real Value(raw_t r) { return (real)(int)r; }
INLINE raw_t FromFloat(float v) { return (raw_t)(int)v; }
#elif KF_DT == 4
typedef ulong raw_t;
INLINE real Value(raw_t r) { return (real)(long)r; }
INLINE raw_t FromFloat(float v) { return (raw_t)(long)v; }
#else
typedef uchar raw_t;
INLINE real Value(raw_t r) { return (real)r; }
INLINE raw_t FromFloat(float v) { return (raw_t)(uint)v; }
#endif
#define KF_IS_FLOAT (KF_DT <= 2 || KF_DT == 6)

// Element i of a buffer filled with a 32-bit pattern (the poison), read as a raw element.
INLINE raw_t PoisonRaw(uint pattern, ulong i) {
#if KF_DT == 0 || KF_DT == 6
  return (raw_t)(pattern >> (16 * (i & 1)));
#elif KF_DT == 1 || KF_DT == 3
  return pattern;
#elif KF_DT == 2 || KF_DT == 4
  return ((raw_t)pattern << 32) | pattern;
#else
  return (raw_t)(pattern >> (8 * (i & 3)));
#endif
}

// Philox4x32-10 (Salmon et al., 2011): counter (i, stream), key (seed).
INLINE void Philox(ulong i, uint stream, uint k0, uint k1, uint out[4]) {
  uint c0 = (uint)i, c1 = (uint)(i >> 32), c2 = stream, c3 = 0;
  for (int r = 0; r < 10; ++r) {
    uint hi0 = MULHI(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    uint hi1 = MULHI(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

INLINE float Unit(uint x) { return (float)(x >> 8) * 5.9604644775390625e-08f; }  // [0, 1)

// kind 0: "normal" with mean a and deviation b, as the scaled sum of four uniforms (Irwin-Hall:
// a bell between a +- 3.46 b); kind 1: uniform in [a, b).
KERNEL void kf_random(GLOBAL raw_t* p, ulong n, uint seed_lo, uint seed_hi, uint stream, int kind,
                      float a, float b) {
  for (ulong i = GROUP * LSIZE + LID; i < n; i += GROUPS * LSIZE) {
    uint x[4];
    Philox(i, stream, seed_lo, seed_hi, x);
    float v;
    if (kind == 0) {
      float s = FADD(FADD(FADD(Unit(x[0]), Unit(x[1])), Unit(x[2])), Unit(x[3]));
      v = FADD(a, FMUL(b, FMUL(FSUB(s, 2.0f), 1.7320508075688772f)));
    } else {
      v = FADD(a, FMUL(FSUB(b, a), Unit(x[0])));
    }
    p[i] = FromFloat(v);
  }
}

// Raw elements that differ between two buffers, per group.
KERNEL void kf_differ(GLOBAL const raw_t* x, GLOBAL const raw_t* y, ulong n, GLOBAL uint* part) {
  LOCAL uint acc[KF_GROUP];
  uint count = 0;
  for (ulong i = GROUP * LSIZE + LID; i < n; i += GROUPS * LSIZE) count += x[i] != y[i];
  acc[LID] = count;
  BARRIER;
  for (ulong s = LSIZE / 2; s > 0; s /= 2) {
    if (LID < s) acc[LID] += acc[LID + s];
    BARRIER;
  }
  if (LID == 0) part[GROUP] = acc[0];
}

// The output against the reference, as the host comparison does it (compare.cpp): per group
// dpart[2g] max |ref-out|, dpart[2g+1] max relative error; upart[8g + 0..5]: over 1% relative
// error, NaN/Inf where the reference is finite, never written (poison), out of tolerance, the
// first element out of tolerance (0xffffffff: none), the element of the largest error.
KERNEL void kf_compare(GLOBAL const raw_t* ref, GLOBAL const raw_t* out, ulong n, real atol,
                       real rtol, uint poison, GLOBAL real* dpart, GLOBAL uint* upart) {
  LOCAL real abs_l[KF_GROUP], rel_l[KF_GROUP];
  LOCAL uint cnt_l[4][KF_GROUP], first_l[KF_GROUP], worst_l[KF_GROUP];
  real max_abs = 0, max_rel = 0;
  uint over = 0, nan = 0, unwritten = 0, bad = 0, first = 0xffffffffu, worst = 0xffffffffu;
  for (ulong i = GROUP * LSIZE + LID; i < n; i += GROUPS * LSIZE) {
    raw_t o_raw = out[i];
    if (o_raw == PoisonRaw(poison, i)) {
      ++unwritten;
      ++bad;
      if (first == 0xffffffffu) first = (uint)i;
      continue;
    }
    real r = Value(ref[i]), o = Value(o_raw);
#if KF_IS_FLOAT
    if (!ISFINITE(o)) {
      if (ISFINITE(r) || ISNAN(r) != ISNAN(o)) {
        ++nan;
        ++bad;
        if (first == 0xffffffffu) first = (uint)i;
      }
      continue;
    }
#endif
    real abs_err = fabs(DSUB(r, o));
    real rel_err = DDIV(abs_err, DADD(fabs(r), (real)1e-6));
    if (abs_err > max_abs) {
      max_abs = abs_err;
      worst = (uint)i;
    }
    if (rel_err > max_rel) max_rel = rel_err;
    if (rel_err > (real)0.01) ++over;
    if (abs_err > DADD(atol, DMUL(rtol, fabs(r)))) {
      ++bad;
      if (first == 0xffffffffu) first = (uint)i;
    }
  }
  abs_l[LID] = max_abs;
  rel_l[LID] = max_rel;
  cnt_l[0][LID] = over;
  cnt_l[1][LID] = nan;
  cnt_l[2][LID] = unwritten;
  cnt_l[3][LID] = bad;
  first_l[LID] = first;
  worst_l[LID] = worst;
  BARRIER;
  for (ulong s = LSIZE / 2; s > 0; s /= 2) {
    if (LID < s) {
      ulong o = LID + s;
      if (abs_l[o] > abs_l[LID] || (abs_l[o] == abs_l[LID] && worst_l[o] < worst_l[LID])) {
        abs_l[LID] = abs_l[o];
        worst_l[LID] = worst_l[o];
      }
      if (rel_l[o] > rel_l[LID]) rel_l[LID] = rel_l[o];
      for (int k = 0; k < 4; ++k) cnt_l[k][LID] += cnt_l[k][o];
      if (first_l[o] < first_l[LID]) first_l[LID] = first_l[o];
    }
    BARRIER;
  }
  if (LID == 0) {
    dpart[2 * GROUP] = abs_l[0];
    dpart[2 * GROUP + 1] = rel_l[0];
    for (int k = 0; k < 4; ++k) upart[8 * GROUP + k] = cnt_l[k][0];
    upart[8 * GROUP + 4] = first_l[0];
    upart[8 * GROUP + 5] = worst_l[0];
  }
}

// Byte ranges of a buffer: fill with a 32-bit pattern (byte k of the buffer gets byte k % 4 of
// the pattern, so a range starts in the pattern where the buffer says), copy, hash, scan.
INLINE uchar PatternByte(uint pattern, ulong at) { return (uchar)(pattern >> (8 * (at & 3))); }

KERNEL void kf_fill(GLOBAL uchar* p, ulong offset, ulong bytes, uint pattern) {
  ulong i = GROUP * LSIZE + LID, step = GROUPS * LSIZE;
  if ((offset & 3) == 0) {
    GLOBAL uint* w = (GLOBAL uint*)(p + offset);
    for (ulong k = i; k < bytes / 4; k += step) w[k] = pattern;
    if (i == 0)
      for (ulong b = bytes / 4 * 4; b < bytes; ++b) p[offset + b] = PatternByte(pattern, offset + b);
  } else {
    for (ulong b = i; b < bytes; b += step) p[offset + b] = PatternByte(pattern, offset + b);
  }
}

KERNEL void kf_copy(GLOBAL const uchar* src, ulong src_offset, GLOBAL uchar* dst,
                    ulong dst_offset, ulong bytes) {
  ulong i = GROUP * LSIZE + LID, step = GROUPS * LSIZE;
  if (((src_offset | dst_offset) & 3) == 0) {
    GLOBAL const uint* s = (GLOBAL const uint*)(src + src_offset);
    GLOBAL uint* d = (GLOBAL uint*)(dst + dst_offset);
    for (ulong k = i; k < bytes / 4; k += step) d[k] = s[k];
    if (i == 0)
      for (ulong b = bytes / 4 * 4; b < bytes; ++b) dst[dst_offset + b] = src[src_offset + b];
  } else {
    for (ulong b = i; b < bytes; b += step) dst[dst_offset + b] = src[src_offset + b];
  }
}

INLINE ulong Mix(ulong z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ul;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebul;
  return z ^ (z >> 31);
}

// Per group, the wrapping sum of Mix(word index, word) over its 4-byte words (the last one
// padded with zeros): sums of groups add up to one figure whatever the grid.
KERNEL void kf_hash(GLOBAL const uchar* p, ulong offset, ulong bytes, GLOBAL ulong* part) {
  LOCAL ulong acc[KF_GROUP];
  ulong sum = 0, words = (bytes + 3) / 4;
  for (ulong k = GROUP * LSIZE + LID; k < words; k += GROUPS * LSIZE) {
    uint w = 0;
    for (ulong b = 0; b < 4 && 4 * k + b < bytes; ++b) w |= (uint)p[offset + 4 * k + b] << (8 * b);
    sum += Mix((k << 32) ^ (ulong)w ^ 0x9e3779b97f4a7c15ul);
  }
  acc[LID] = sum;
  BARRIER;
  for (ulong s = LSIZE / 2; s > 0; s /= 2) {
    if (LID < s) acc[LID] += acc[LID + s];
    BARRIER;
  }
  if (LID == 0) part[GROUP] = acc[0];
}

// Bytes of a range that no longer hold the pattern: per group part[3g] their count, part[3g+1]
// the first and part[3g+2] the last (offsets within the range; 0xffffffff and 0 when none).
KERNEL void kf_scan(GLOBAL const uchar* p, ulong offset, ulong bytes, uint pattern,
                    GLOBAL uint* part) {
  LOCAL uint cnt[KF_GROUP], lo[KF_GROUP], hi[KF_GROUP];
  uint c = 0, first = 0xffffffffu, last = 0;
  for (ulong b = GROUP * LSIZE + LID; b < bytes; b += GROUPS * LSIZE) {
    if (p[offset + b] != PatternByte(pattern, offset + b)) {
      ++c;
      if ((uint)b < first) first = (uint)b;
      if ((uint)b > last) last = (uint)b;
    }
  }
  cnt[LID] = c;
  lo[LID] = first;
  hi[LID] = last;
  BARRIER;
  for (ulong s = LSIZE / 2; s > 0; s /= 2) {
    if (LID < s) {
      cnt[LID] += cnt[LID + s];
      if (lo[LID + s] < lo[LID]) lo[LID] = lo[LID + s];
      if (hi[LID + s] > hi[LID]) hi[LID] = hi[LID + s];
    }
    BARRIER;
  }
  if (LID == 0) {
    part[3 * GROUP] = cnt[0];
    part[3 * GROUP + 1] = lo[0];
    part[3 * GROUP + 2] = hi[0];
  }
}
)KFSRC";

}  // namespace kf
