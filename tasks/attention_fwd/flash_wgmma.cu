// FlashAttention-3's form on Hopper's warpgroup MMA: one block per (b, h, tile of 128 queries),
// three warpgroups. Warpgroup 0 is the producer: it copies the block's Q once, then the K and V
// tiles of BLOCK_N keys into a STAGES-deep ring in shared memory (cp.async, 16 bytes a thread,
// signalled through mbarriers as in gemm_wgmma_ws), and gives its registers up (setmaxnreg 40).
// Warpgroups 1 and 2 are consumers (setmaxnreg 232), each owning 64 query rows: S = Q K^T on
// wgmma.m64nBLOCK_Nk16 with both operands in shared memory, the online softmax in registers (base
// 2, the scale folded into log2(e)), P rounded once to fp16 (bf16 under KF_BF16, the
// attention_fwd.bf16 variant) and fed to O += P V on
// wgmma.m64n128k16 straight from registers (wgmma's A operand may be registers), O in fp32
// registers until the end. K and V have their own barriers (full_k/full_v: the producer's copies
// landed; empty_k/empty_v: the 8 consumer warps are done reading), so a K tile goes back as soon
// as S is computed and the producer refills it while P V still reads V.
// OVERLAP 1 is FA3's intra-warpgroup pipelining: iteration t issues S_t = Q K_t^T and then
// O += P_{t-1} V_{t-1}, waits for S_t only, computes its softmax while P V runs on the tensor
// cores, then waits for P V and rescales O. OVERLAP 0 runs each tile in order (S, softmax, P V).
// Causal: a block reads the key tiles up to its last query row; a consumer skips the compute of
// the tiles past its own 64 rows (it still takes part in the barriers), and masks only on tiles
// that reach past its first row or past S. Query tiles are numbered from the last, so the blocks
// with the most keys start first.
//
// Shared-memory layouts (each region 1024-byte aligned; chunk c of 16 bytes of a 128-byte row r
// stored at c ^ (r % 8): the 128-byte swizzle that every descriptor below names, layout type 1;
// the pattern repeats every 8 rows = 1024 bytes, so the descriptors' base offset is 0):
//   Q: 128 rows (queries) x 128 halves (dims), as two 64-dim blocks of 128 rows x 128 bytes.
//      The A operand of Q K^T, K-major (dims contiguous), imm-trans-a 0: descriptor at the
//      warpgroup's first row, stride-dimension offset (SBO) 1024 = 8 rows, the leading offset
//      unused with this swizzle (16); a k16 step is +32 bytes within a 128-byte row (as A in
//      gemm_wgmma), the fifth k16 step starts the second dim block.
//   K stage: BLOCK_N rows (keys) x 128 dims, two 64-dim blocks of BLOCK_N x 128 bytes. The B
//      operand of Q K^T is K^T (dims x keys): B[d][j] = K[j][d], dims (the reduction, "K" of the
//      MMA) contiguous = K-major, imm-trans-b 0; the same descriptor form as Q (N = BLOCK_N rows
//      in 8-row groups SBO 1024 apart, +32 bytes a k16 step).
//   V stage: BLOCK_N rows (keys) x 128 dims, two 64-dim blocks. The B operand of P V is V itself
//      (keys x dims): the reduction runs over keys (rows) and N over dims, which are contiguous,
//      so B is N-major, imm-trans-b 1 (as B in gemm_wgmma, a row-major K x N matrix): SBO 1024 =
//      8 key rows, leading offset (LBO) BLOCK_N * 128 = from one 64-dim block to the next (N = 128
//      spans two), a k16 step is 16 rows = +2048 bytes.
// Register layouts (PTX ISA, "Register Fragments" of wgmma .m64nNk16; warp w = 0..3 of the
// warpgroup, g = lane / 4, t4 = lane % 4):
//   Accumulator (S and O, fp32): element j (0 .. N/2 - 1) of a thread is at row 16 w + g + 8 * (j
//      / 2 % 2), column 8 * (j / 4) + 2 * t4 + j % 2 (gemm_wgmma's epilogue stores C this way).
//      So a thread holds two rows, g and g + 8, and the four threads of a quad hold a whole row:
//      the row max and sum reduce over lanes xor 1 and 2.
//   A from registers (P, four f16x2): row 16 w + g for registers 0 and 2, + 8 for 1 and 3;
//      columns 2 t4 + {0, 1} in registers 0 and 1, 8 + 2 t4 + {0, 1} in 2 and 3 (mma.m16n8k16's A
//      per warp), the lower column in the lower half. For keys 16 kk .. 16 kk + 15 these are S's
//      elements 8 kk + {0, 1}, {2, 3}, {4, 5}, {6, 7}: the accumulator becomes the A operand of
//      P V with no data movement, only the rounding to fp16.
// The copies zero-fill rows past S and dims past D, so Q K^T and P V may run over the whole 128
// dims and BLOCK_N keys (the k16 steps of Q K^T past D are skipped); masked scores are -inf and
// give p = 0 exactly. A D that is not a multiple of 8 (or unaligned pointers) loads with guarded
// scalar reads into the same layout, released by plain mbarrier arrivals.
// @kernel flash_wgmma
// @grid ceil_div(S, 128), B * H
// @block 384, 1
// @shared STAGES * BLOCK_N * 512 + 32768 + 2048
// @param BLOCK_N in [128, 64, 96] default 128
// @param STAGES in [2, 3, 4] default 2
// @param OVERLAP in [1, 0] default 1
// @constraint D <= 128
// @constraint STAGES * BLOCK_N * 512 + 32768 + 2048 <= local_mem_bytes
// The element type: fp16, or bf16 under KF_BF16 (the attention_fwd.bf16 variant), with its
// wgmma operand type and its conversions from fp32 (P is rounded to it before P V).
#if KF_BF16
#include <cuda_bf16.h>
typedef __nv_bfloat16 elem_t;
typedef __nv_bfloat162 elem2_t;
#define ELEM_PTX "bf16"
__device__ __forceinline__ unsigned short elem_bits(elem_t x) {
  return __bfloat16_as_ushort(x);
}
__device__ __forceinline__ elem_t elem_rn(float x) {
  return __float2bfloat16_rn(x);
}
__device__ __forceinline__ elem2_t elem2_rn(float x, float y) {
  return __floats2bfloat162_rn(x, y);
}
#else
#include <cuda_fp16.h>
typedef __half elem_t;
typedef __half2 elem2_t;
#define ELEM_PTX "f16"
__device__ __forceinline__ unsigned short elem_bits(elem_t x) {
  return __half_as_ushort(x);
}
__device__ __forceinline__ elem_t elem_rn(float x) {
  return __float2half_rn(x);
}
__device__ __forceinline__ elem2_t elem2_rn(float x, float y) {
  return __floats2half2_rn(x, y);
}
#endif

#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no INFINITY)

#define DMAX 128
#define BLOCK_M 128  // queries per block: 64 per consumer warpgroup
#define PRODUCERS 128
#define CONSUMER_WARPS 8
#define SACC (BLOCK_N / 2)  // fp32 elements of S per thread
#define OACC (DMAX / 2)     // fp32 elements of O per thread
#define Q_BYTES (BLOCK_M * DMAX * 2)
#define TILE_BYTES (BLOCK_N * DMAX * 2)  // one K or V tile
#define HALF_TILE (BLOCK_N * 128)        // one 64-dim block of a K or V tile

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously; bytes past src_bytes (0 or 16) are zero-filled.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}
// Orders generic-proxy writes to shared memory (cp.async, st.shared) seen through a barrier
// before later async-proxy reads of it (wgmma's operand fetches).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void st_shared16(unsigned dst, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}
// wgmma reads and writes these registers asynchronously: this empty statement, which "changes"
// each of them, keeps the compiler from moving their uses across the waits and fences around it.
__device__ __forceinline__ void fence_regs(float* d, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ void fence_regs(unsigned* d, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// A shared-memory matrix descriptor for the 128-byte swizzle (layout type 1, bits 62-63): start
// address, leading-dimension byte offset and stride-dimension byte offset, each >> 4 in 14 bits.
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// One arrival on `bar` once all of this thread's earlier cp.async have completed.
__device__ __forceinline__ void mbar_arrive_cp_async(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase of `bar` with parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

#if BLOCK_N == 64
// S[64 x 64] (+)= Q[64 x 16] * K^T[16 x 64]: A (Q) and B (K) from shared memory, both K-major
// (imm-trans-a 0, imm-trans-b 0); accumulate 0 (scale-d false) starts d from zero.
__device__ __forceinline__ void wgmma_qk(float* d, unsigned long long da, unsigned long long db,
                                         int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(accumulate));
}
#elif BLOCK_N == 96
// S[64 x 96] (+)= Q[64 x 16] * K^T[16 x 96]: A (Q) and B (K) from shared memory, both K-major
// (imm-trans-a 0, imm-trans-b 0); accumulate 0 (scale-d false) starts d from zero.
__device__ __forceinline__ void wgmma_qk(float* d, unsigned long long da, unsigned long long db,
                                         int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %50, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n96k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "
      "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
      "}, %48, %49, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
      : "l"(da), "l"(db), "r"(accumulate));
}
#elif BLOCK_N == 128
// S[64 x 128] (+)= Q[64 x 16] * K^T[16 x 128]: A (Q) and B (K) from shared memory, both K-major
// (imm-trans-a 0, imm-trans-b 0); accumulate 0 (scale-d false) starts d from zero.
__device__ __forceinline__ void wgmma_qk(float* d, unsigned long long da, unsigned long long db,
                                         int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "
      "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "
      "%56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "l"(da), "l"(db), "r"(accumulate));
}
#endif

// O[64 x 128] += P[64 x 16] * V[16 x 128]: A (P) from registers (four f16x2 per thread), B (V)
// from shared memory, N-major (imm-trans-b 1).
__device__ __forceinline__ void wgmma_pv(float* d, const unsigned* a, unsigned long long db) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "
      "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "
      "%56, %57, %58, %59, %60, %61, %62, %63"
      "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

__device__ __forceinline__ unsigned pack2(float lo, float hi) {  // lo: the lower 16 bits
  const elem2_t h = elem2_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&h);
}

// Eight halves of a row, zeros past `left` valid elements, as one 16-byte word.
__device__ __forceinline__ uint4 gather8(const elem_t* src, int left) {
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned lo = 2 * i < left ? elem_bits(src[2 * i]) : 0u;
    const unsigned hi = 2 * i + 1 < left ? elem_bits(src[2 * i + 1]) : 0u;
    w[i] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Rows row0 .. row0 + ROWS - 1 of a [S, D] matrix into the swizzled layout at `dst`: two blocks
// of 64 dims, ROWS x 128 bytes each, zeros past S and D. The producer's thread copies the 16-byte
// chunk tid % 16 (block chunk / 8, chunk chunk % 8 in it) of rows tid / 16 + 8 p; every row it
// touches has the same row % 8, hence one swizzle phase. Then one arrival on `bar`: when the
// copies have landed (cp.async) or now (plain stores, released by the arrival).
template <int ROWS>
__device__ __forceinline__ void load_rows(unsigned dst, const elem_t* __restrict__ src, int row0,
                                          int S, int D, bool vec, int tid, unsigned bar) {
  const int r0 = tid >> 4, chunk = tid & 15, d = chunk * 8;
  const unsigned off = (chunk >> 3) * (ROWS * 128) + r0 * 128 + (((chunk & 7) ^ (r0 & 7)) << 4);
#pragma unroll 1
  for (int p = 0; p < ROWS / 8; ++p) {
    const int row = row0 + r0 + 8 * p;
    const bool in = row < S && d < D;
    const unsigned at = dst + off + p * 8 * 128;
    if (vec) {
      cp_async16(at, in ? src + (long long)row * D + d : src, in ? 16 : 0);
    } else {
      st_shared16(at, gather8(src + (long long)(in ? row : 0) * D + d, in ? D - d : 0));
    }
  }
  if (vec)
    mbar_arrive_cp_async(bar);
  else
    mbar_arrive(bar);
}

// The consumer's state for its 64 rows: this thread's rows r0 = w0 + 16 warp + g and r0 + 8.
struct Rows {
  float m0, m1, l0, l1;  // running max (base 2) and this thread's share of the row sum
};

// Scales S into base 2, masks keys past a row or past S (on edge tiles only), and turns S into
// P = exp2(S - m_new) in place; returns the factors exp2(m_old - m_new) that rescale O and l.
__device__ __forceinline__ void softmax_tile(float* s, Rows& st, float scale2, int n0, int r0,
                                             int S, bool edge, int t4, float& a0, float& a1) {
  float mx0 = NEG_INF, mx1 = NEG_INF;
#pragma unroll
  for (int j = 0; j < SACC; ++j) {
    float x = s[j] * scale2;
    const bool hi = (j >> 1) & 1;  // row r0 + 8
    if (edge) {
      const int key = n0 + 8 * (j >> 2) + 2 * t4 + (j & 1), row = r0 + (hi ? 8 : 0);
      if (key > row || key >= S) x = NEG_INF;
    }
    s[j] = x;
    if (hi)
      mx1 = fmaxf(mx1, x);
    else
      mx0 = fmaxf(mx0, x);
  }
#pragma unroll
  for (int w = 1; w < 4; w <<= 1) {
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, w));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, w));
  }
  // Every row sees key 0 in the first tile, so the max is finite from then on; a row whose keys
  // in a later tile are all masked keeps its max (a = 1, p = 0).
  const float mn0 = fmaxf(st.m0, mx0), mn1 = fmaxf(st.m1, mx1);
  a0 = exp2f(st.m0 - mn0);  // 0 at the first tile (m = -inf)
  a1 = exp2f(st.m1 - mn1);
  st.m0 = mn0;
  st.m1 = mn1;
  float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
  for (int j = 0; j < SACC; ++j) {
    const bool hi = (j >> 1) & 1;
    const float p = exp2f(s[j] - (hi ? mn1 : mn0));
    s[j] = p;
    if (hi)
      sum1 += p;
    else
      sum0 += p;
  }
  st.l0 = st.l0 * a0 + sum0;
  st.l1 = st.l1 * a1 + sum1;
}

__device__ __forceinline__ void rescale(float* o, float a0, float a1) {
#pragma unroll
  for (int j = 0; j < OACC; ++j) o[j] *= ((j >> 1) & 1) ? a1 : a0;
}

// P rounded once to fp16, as the A fragments of P V's k16 steps (see the layout note above).
__device__ __forceinline__ void pack_p(unsigned* p, const float* s) {
#pragma unroll
  for (int kk = 0; kk < BLOCK_N / 16; ++kk)
#pragma unroll
    for (int i = 0; i < 4; ++i) p[4 * kk + i] = pack2(s[8 * kk + 2 * i], s[8 * kk + 2 * i + 1]);
}

// Issues S = Q K^T over the first STEPS k16 steps of dims for the key tile at `kst` (the K
// stage's shared address), one commit group: a straight line of wgmma, since a branch between
// them makes ptxas serialise the group.
template <int STEPS>
__device__ __forceinline__ void issue_qk_steps(float* s, unsigned q_wg, unsigned kst) {
  fence_regs(s, SACC);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < STEPS; ++kk) {
    const unsigned blk = kk >> 2, col = (kk & 3) * 32;
    wgmma_qk(s, make_desc(q_wg + blk * (BLOCK_M * 128) + col, 16, 1024),
             make_desc(kst + blk * HALF_TILE + col, 16, 1024), kk > 0);
  }
  wgmma_commit();
}
// Head dimensions up to 64 skip the second 64-dim block (zeros in Q and K).
__device__ __forceinline__ void issue_qk(float* s, unsigned q_wg, unsigned kst, int D) {
  if (D > 64)
    issue_qk_steps<DMAX / 16>(s, q_wg, kst);
  else
    issue_qk_steps<4>(s, q_wg, kst);
}

// Issues O += P V for the value tile at `vst`, one commit group.
__device__ __forceinline__ void issue_pv(float* o, unsigned* p, unsigned vst) {
  fence_regs(o, OACC);
  fence_regs(p, BLOCK_N / 4);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BLOCK_N / 16; ++kk)
    wgmma_pv(o, p + 4 * kk, make_desc(vst + kk * 2048, HALF_TILE, 1024));
  wgmma_commit();
}

extern "C" __global__ void __launch_bounds__(384, 1)
    flash_wgmma(const elem_t* __restrict__ q, const elem_t* __restrict__ k,
                const elem_t* __restrict__ v, elem_t* __restrict__ o, int B, int H, int S, int D,
                float scale) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The swizzle repeats from 1024-byte boundaries: round the base up (@shared has 1 KB to spare).
  const unsigned q0 = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const unsigned kv0 = q0 + Q_BYTES;  // stage s: K at kv0 + 2 s TILE_BYTES, V after it
  const unsigned bars = kv0 + STAGES * 2 * TILE_BYTES;
  // Barriers, 8 bytes each: full_q, then per stage full_k, full_v, empty_k, empty_v.
#define FULL_Q bars
#define FULL_K(s) (bars + 8 + 32 * (s))
#define FULL_V(s) (bars + 16 + 32 * (s))
#define EMPTY_K(s) (bars + 24 + 32 * (s))
#define EMPTY_V(s) (bars + 32 + 32 * (s))
  const int tid = threadIdx.x, wg = tid >> 7;
  const int i0 = (gridDim.x - 1 - blockIdx.x) * BLOCK_M;  // the longest query tiles first
  const long long head = (long long)blockIdx.y * S * D;
  const int tiles = (min(S, i0 + BLOCK_M) + BLOCK_N - 1) / BLOCK_N;  // key tiles of the block

  if (tid == 0) {
    mbar_init(FULL_Q, PRODUCERS);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(FULL_K(s), PRODUCERS);
      mbar_init(FULL_V(s), PRODUCERS);
      mbar_init(EMPTY_K(s), CONSUMER_WARPS);
      mbar_init(EMPTY_V(s), CONSUMER_WARPS);
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the last block-wide barrier: the roles part here

  if (wg == 0) {
    // Producer: Q once, then K and V of each key tile, each stage refilled once the consumers
    // have freed it (the wait on the phase of tile t - STAGES).
    setmaxnreg_dec<40>();
    const bool vec =
        (D % 8 == 0) && ((size_t)q % 16 == 0) && ((size_t)k % 16 == 0) && ((size_t)v % 16 == 0);
    load_rows<BLOCK_M>(q0, q + head, i0, S, D, vec, tid, FULL_Q);
    int s = 0, phase = 0;
#pragma unroll 1
    for (int t = 0; t < tiles; ++t) {
      const unsigned kst = kv0 + s * 2 * TILE_BYTES;
      if (t >= STAGES) mbar_wait(EMPTY_K(s), phase ^ 1);
      load_rows<BLOCK_N>(kst, k + head, t * BLOCK_N, S, D, vec, tid, FULL_K(s));
      if (t >= STAGES) mbar_wait(EMPTY_V(s), phase ^ 1);
      load_rows<BLOCK_N>(kst + TILE_BYTES, v + head, t * BLOCK_N, S, D, vec, tid, FULL_V(s));
      if (++s == STAGES) {
        s = 0;
        phase ^= 1;
      }
    }
    cp_async_wait<0>();  // leave no copy in flight behind an exited thread
    return;
  }

  // Consumers.
  setmaxnreg_inc<232>();
  const int cw = wg - 1, warp = (tid >> 5) & 3, lane = tid & 31;
  const int g = lane >> 2, t4 = lane & 3;
  const int w0 = i0 + cw * 64;        // the warpgroup's first query row
  const int r0 = w0 + warp * 16 + g;  // this thread's rows r0, r0 + 8
  // Key tiles this warpgroup computes: those holding a key <= its last row (none past S).
  const int mine = w0 < S ? (min(S, w0 + 64) + BLOCK_N - 1) / BLOCK_N : 0;
  const float scale2 = scale * 1.4426950408889634f;  // scores in base 2
  const unsigned q_wg = q0 + cw * 64 * 128;
  const bool lead = lane == 0;  // one arrival per warp on the empty barriers

  Rows st = {NEG_INF, NEG_INF, 0.0f, 0.0f};
  float oacc[OACC];
#pragma unroll
  for (int j = 0; j < OACC; ++j) oacc[j] = 0.0f;
  float sacc[SACC];
  unsigned pfrag[BLOCK_N / 4];

  if (mine > 0) {
    mbar_wait(FULL_Q, 0);
    fence_proxy_async();
  }
  if (OVERLAP) {
    // Tile 0: S_0, its softmax, P_0 kept for the next iteration's P V.
    if (mine > 0) {
      mbar_wait(FULL_K(0), 0);
      fence_proxy_async();
      issue_qk(sacc, q_wg, kv0, D);
      wgmma_wait<0>();
      fence_regs(sacc, SACC);
      if (lead) mbar_arrive(EMPTY_K(0));
      float a0, a1;
      softmax_tile(sacc, st, scale2, 0, r0, S, BLOCK_N - 1 > w0 || BLOCK_N > S, t4, a0, a1);
      pack_p(pfrag, sacc);
    }
    int s = 1, phase = 0;    // the stage and phase of tile t (STAGES >= 2)
    int ps = 0, pphase = 0;  // those of tile t - 1
#pragma unroll 1
    for (int t = 1; t < mine; ++t) {
      const int n0 = t * BLOCK_N;
      const unsigned kst = kv0 + s * 2 * TILE_BYTES;
      const unsigned vprev = kv0 + ps * 2 * TILE_BYTES + TILE_BYTES;
      mbar_wait(FULL_K(s), phase);
      mbar_wait(FULL_V(ps), pphase);
      fence_proxy_async();
      issue_qk(sacc, q_wg, kst, D);  // S_t
      issue_pv(oacc, pfrag, vprev);  // O += P_{t-1} V_{t-1}, in flight during the softmax
      wgmma_wait<1>();               // S_t is done; P V may still run
      fence_regs(sacc, SACC);
      if (lead) mbar_arrive(EMPTY_K(s));
      float a0, a1;
      softmax_tile(sacc, st, scale2, n0, r0, S, n0 + BLOCK_N - 1 > w0 || n0 + BLOCK_N > S, t4, a0,
                   a1);
      wgmma_wait<0>();  // P V of tile t - 1 is done: O and pfrag are free
      fence_regs(oacc, OACC);
      fence_regs(pfrag, BLOCK_N / 4);
      if (lead) mbar_arrive(EMPTY_V(ps));
      rescale(oacc, a0, a1);
      pack_p(pfrag, sacc);
      ps = s;
      pphase = phase;
      if (++s == STAGES) {
        s = 0;
        phase ^= 1;
      }
    }
    if (mine > 0) {  // the last P V
      mbar_wait(FULL_V(ps), pphase);
      fence_proxy_async();
      issue_pv(oacc, pfrag, kv0 + ps * 2 * TILE_BYTES + TILE_BYTES);
      wgmma_wait<0>();
      fence_regs(oacc, OACC);
      if (lead) mbar_arrive(EMPTY_V(ps));
    }
  } else {
#pragma unroll 1
    for (int t = 0; t < mine; ++t) {
      const int s = t % STAGES, phase = (t / STAGES) & 1, n0 = t * BLOCK_N;
      const unsigned kst = kv0 + s * 2 * TILE_BYTES;
      mbar_wait(FULL_K(s), phase);
      fence_proxy_async();
      issue_qk(sacc, q_wg, kst, D);
      wgmma_wait<0>();
      fence_regs(sacc, SACC);
      if (lead) mbar_arrive(EMPTY_K(s));
      float a0, a1;
      softmax_tile(sacc, st, scale2, n0, r0, S, n0 + BLOCK_N - 1 > w0 || n0 + BLOCK_N > S, t4, a0,
                   a1);
      rescale(oacc, a0, a1);
      pack_p(pfrag, sacc);
      mbar_wait(FULL_V(s), phase);
      fence_proxy_async();
      issue_pv(oacc, pfrag, kst + TILE_BYTES);
      wgmma_wait<0>();
      fence_regs(oacc, OACC);
      if (lead) mbar_arrive(EMPTY_V(s));
    }
  }
  // The block's tiles past this warpgroup's rows: no compute, but the producer counts on every
  // warp's arrival. Waiting for the tile to land first keeps an early arrival from counting
  // towards the stage's previous phase.
#pragma unroll 1
  for (int t = mine; t < tiles; ++t) {
    const int s = t % STAGES, phase = (t / STAGES) & 1;
    mbar_wait(FULL_K(s), phase);
    if (lead) mbar_arrive(EMPTY_K(s));
    mbar_wait(FULL_V(s), phase);
    if (lead) mbar_arrive(EMPTY_V(s));
  }
  if (mine == 0) return;

    // O / l, rounded once to fp16. The row sums are spread over the quad.
#pragma unroll
  for (int w = 1; w < 4; w <<= 1) {
    st.l0 += __shfl_xor_sync(0xffffffffu, st.l0, w);
    st.l1 += __shfl_xor_sync(0xffffffffu, st.l1, w);
  }
  const float inv0 = 1.0f / st.l0, inv1 = 1.0f / st.l1;
#pragma unroll
  for (int j = 0; j < OACC; j += 2) {
    const bool hi = (j >> 1) & 1;
    const int r = r0 + (hi ? 8 : 0), d = 8 * (j >> 2) + 2 * t4;
    if (r >= S || d >= D) continue;
    const float inv = hi ? inv1 : inv0;
    elem_t* dst = o + head + (long long)r * D + d;
    const float x = oacc[j] * inv, y = oacc[j + 1] * inv;
    if ((D & 1) == 0) {
      *reinterpret_cast<elem2_t*>(dst) = elem2_rn(x, y);
    } else {
      dst[0] = elem_rn(x);
      if (d + 1 < D) dst[1] = elem_rn(y);
    }
  }
}
