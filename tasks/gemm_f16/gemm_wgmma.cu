// Hopper tensor cores through warpgroup MMA: wgmma.mma_async.m64nNk16 (fp16 in, or bf16
// under KF_BF16; fp32 accumulators) reading both operands straight from shared memory through matrix descriptors,
// fed by a STAGES-deep cp.async pipeline in dynamic shared memory (@shared, up to 227 KB).
// A block of two warpgroups (256 threads) computes a BM x BN tile of C; each warpgroup owns
// BM/2 rows, as BM/128 wgmma tiles of 64 x BN, and holds them in fp32 registers (BM/128 * BN/2
// per thread) until the end, when they are rounded to fp16 once and stored.
// Shared memory per stage, each part 1024-byte aligned, in the 128-byte swizzle the descriptors
// name (16-byte chunk c of each 128-byte row is stored at chunk c ^ (row % 8)):
//   A: BM rows of BK = 64 halves (128 bytes), K-major, as wgmma expects without a transpose;
//   B: BN/64 blocks, each the 64 x 64 halves of 64 columns: row k of a block is 128 bytes of
//      N-contiguous halves (N-major, imm-trans-b = 1), since B is row-major K x N.
// The K loop, one __syncthreads per K step of 64: wait for this thread's copies of step kt,
// fence them to the async proxy (wgmma reads shared memory through it), barrier, issue the
// copies of step kt + STAGES - 2, then four k16 wgmma per 64-row tile on step kt, committed as
// one group, and wait until only that group is in flight: the previous step's stage is free by
// the next barrier, so copies run STAGES - 2 steps ahead of the tensor cores while one wgmma
// group always queues behind the running one. cp.async moves 16 bytes and zero-fills past the
// matrix edges when rows are 16-byte aligned (K, N multiples of 8); other sizes load the tiles
// with guarded scalar reads into the same layout. Blocks are numbered along M in groups of
// GROUP_M tile rows, so a wave of blocks shares its A and B tiles in L2. EPI 1 stores C through
// shared memory in 16-byte words (whole rows of the tile per warp) instead of 4-byte stores
// straight from the accumulators.
// @kernel gemm_wgmma
// @grid ceil_div(M, BM) * ceil_div(N, BN)
// @block 256
// @shared STAGES * (BM + BN) * 128 + 1024
// @param BM in [128, 256] default 128
// @param BN in [64, 128, 256] default 256
// @param STAGES in [3, 4, 5, 6] default 4
// @param GROUP_M in [1, 4, 8, 16] default 8
// @param EPI in [0, 1] default 1
// @constraint (BM // 128) * BN <= 256
// @constraint STAGES * (BM + BN) * 128 + 1024 <= local_mem_bytes
// @constraint EPI == 0 or BM * (BN * 2 + 16) <= STAGES * (BM + BN) * 128
// The element type: fp16, or bf16 under KF_BF16 (the gemm_f16.bf16 variant), with its wgmma
// operand type and its conversions from fp32.
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

#define BK 64
#define THREADS 256
#define WG_ROWS (BM / 2)   // rows of C per warpgroup
#define MT (WG_ROWS / 64)  // 64-row wgmma tiles per warpgroup
#define ACC (BN / 2)       // fp32 accumulators per thread per 64-row tile
#define A_STAGE_BYTES (BM * BK * 2)
#define B_STAGE_BYTES (BK * BN * 2)
#define STAGE_BYTES (A_STAGE_BYTES + B_STAGE_BYTES)
#define B_BLOCK_BYTES (BK * 128)  // one 64-column block of B: 64 k rows of 128 bytes
// Copies: A rows are 8 chunks of 16 bytes; a pass of the block's threads covers A_RPP rows. B rows
// (k) are BN / 8 chunks; a pass covers B_RPP rows. Both are multiples of 8, so each thread's
// chunks keep one swizzle phase across passes.
#define A_RPP (THREADS / 8)
#define A_PASSES (BM / A_RPP)
#define B_CPR (BN / 8)
#define B_RPP (THREADS / B_CPR)
#define B_PASSES (BK / B_RPP)
#define PREFETCH (STAGES - 2)  // K steps in flight ahead of the one multiplied
#define C_PITCH (BN * 2 + 16)  // bytes per row of the tile of C staged in shared memory (EPI 1)

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously; bytes past src_bytes (0 or 16) are zero-filled.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}
// Orders this thread's generic-proxy writes to shared memory (cp.async, st.shared) before later
// async-proxy reads of it (wgmma's operand fetches).
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
// The accumulators are written asynchronously by wgmma: this empty statement, which "changes"
// each of them, keeps the compiler from moving their reads or writes across the waits and fences
// around it.
__device__ __forceinline__ void fence_operands(float* d, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// A shared-memory matrix descriptor for the 128-byte swizzle (layout type 1, bits 62-63): start
// address, leading-dimension byte offset and stride-dimension byte offset, each >> 4 in 14 bits.
// The swizzle pattern repeats every 1024 bytes from 1024-aligned addresses, so the base offset
// (bits 49-51) is 0.
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

#if BN == 64
// D[64 x 64] += A[64 x 16] * B[16 x 64], both from shared memory (descriptors); B N-major
// (imm-trans-b = 1). d[] holds this thread's 32 fp32 accumulators.
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(1));
}
#elif BN == 128
// D[64 x 128] += A[64 x 16] * B[16 x 128], both from shared memory (descriptors); B N-major
// (imm-trans-b = 1). d[] holds this thread's 64 fp32 accumulators.
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 1;\n"
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
      : "l"(da), "l"(db), "r"(1));
}
#elif BN == 256
// D[64 x 256] += A[64 x 16] * B[16 x 256], both from shared memory (descriptors); B N-major
// (imm-trans-b = 1). d[] holds this thread's 128 fp32 accumulators.
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "
      "%127"
      "}, %128, %129, p, 1, 1, 0, 1;\n"
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
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(1));
}

#endif

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

// Two horizontally adjacent results of row m, columns n and n + 1 (n even).
__device__ __forceinline__ void store2(elem_t* C, int M, int N, bool vec2, int m, int n, float x,
                                       float y) {
  if (m >= M) return;
  elem_t* dst = C + (long long)m * N + n;
  if (vec2) {
    if (n < N) *reinterpret_cast<elem2_t*>(dst) = elem2_rn(x, y);
  } else {
    if (n < N) dst[0] = elem_rn(x);
    if (n + 1 < N) dst[1] = elem_rn(y);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_wgmma(const elem_t* __restrict__ A, const elem_t* __restrict__ B, elem_t* __restrict__ C,
               int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The swizzle repeats from 1024-byte boundaries: round the base up (@shared has 1 KB to spare).
  const unsigned smem0 = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int tid = threadIdx.x;
  const int wg = tid >> 7;  // warpgroup
  const int warp = (tid & 127) >> 5, lane = tid & 31;

  // This block's tile: blocks run along M in groups of GROUP_M tile rows.
  const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
  const int per_group = GROUP_M * grid_n;
  const int first_m = (int)blockIdx.x / per_group * GROUP_M;
  const int group_rows = min(grid_m - first_m, GROUP_M);
  const int in_group = (int)blockIdx.x % per_group;
  const int bm = (first_m + in_group % group_rows) * BM;
  const int bn = in_group / group_rows * BN;

  const bool vec = (K % 8 == 0) && (N % 8 == 0) && ((size_t)A % 16 == 0) && ((size_t)B % 16 == 0);
  // This thread's copies: chunk a_c of A rows a_r + A_RPP * p, and chunk b_c (of BN / 8) of B
  // rows b_r + B_RPP * p, which lies in column block b_c / 8. Offsets are within a stage.
  const int a_r = tid / 8, a_c = tid % 8;
  const unsigned a_dst = a_r * 128 + ((a_c ^ (a_r & 7)) << 4);
  const int b_r = tid / B_CPR, b_c = tid % B_CPR;
  const unsigned b_dst =
      A_STAGE_BYTES + (b_c / 8) * B_BLOCK_BYTES + b_r * 128 + (((b_c & 7) ^ (b_r & 7)) << 4);
  const int b_n = bn + b_c * 8;

  // The tiles of K step k0 into the stage at shared address `stage`: 16-byte cp.async (zero-fill
  // outside the matrices), or guarded scalar reads when rows are not 16-byte aligned.
  auto load = [&](unsigned stage, int k0) {
    if (vec) {
#pragma unroll
      for (int p = 0; p < A_PASSES; ++p) {
        const int m = bm + a_r + p * A_RPP, k = k0 + a_c * 8;
        const bool in = m < M && k < K;
        cp_async16(stage + a_dst + p * A_RPP * 128, in ? A + (long long)m * K + k : A, in ? 16 : 0);
      }
#pragma unroll
      for (int p = 0; p < B_PASSES; ++p) {
        const int k = k0 + b_r + p * B_RPP;
        const bool in = k < K && b_n < N;
        cp_async16(stage + b_dst + p * B_RPP * 128, in ? B + (long long)k * N + b_n : B,
                   in ? 16 : 0);
      }
    } else {
#pragma unroll
      for (int p = 0; p < A_PASSES; ++p) {
        const int m = bm + a_r + p * A_RPP, k = k0 + a_c * 8;
        st_shared16(stage + a_dst + p * A_RPP * 128,
                    gather8(A + (long long)(m < M ? m : 0) * K + k, m < M ? K - k : 0));
      }
#pragma unroll
      for (int p = 0; p < B_PASSES; ++p) {
        const int k = k0 + b_r + p * B_RPP;
        st_shared16(stage + b_dst + p * B_RPP * 128,
                    gather8(B + (long long)(k < K ? k : 0) * N + b_n, k < K ? N - b_n : 0));
      }
    }
  };

  float acc[MT][ACC];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < ACC; ++j) acc[i][j] = 0.0f;

  const int KT = (K + BK - 1) / BK;
  // Copy group s holds K step s; groups are committed even when empty, so "all but the newest
  // PREFETCH - 1 groups done" always means "step kt has landed".
#pragma unroll
  for (int s = 0; s < PREFETCH; ++s) {
    if (s < KT) load(smem0 + s * STAGE_BYTES, s * BK);
    cp_async_commit();
  }

  // Descriptors in stage 0. A (K-major): this warpgroup's rows; 8-row groups 1024 bytes apart
  // (the leading offset is unused with a swizzle). B (N-major): 8-row groups of k 1024 bytes
  // apart, 64-column blocks B_BLOCK_BYTES apart. A stage adds STAGE_BYTES to the address; a k16
  // step 32 bytes along A's rows and 16 rows (2048 bytes) down B's blocks; a 64-row tile of A
  // 64 rows (8192 bytes).
  const unsigned long long a_desc0 = make_desc(smem0 + wg * WG_ROWS * 128, 16, 1024);
  const unsigned long long b_desc0 = make_desc(smem0 + A_STAGE_BYTES, B_BLOCK_BYTES, 1024);

  int rs = 0, ws = PREFETCH;  // the stage multiplied at step kt, and the one loaded
  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<PREFETCH - 1>();
    fence_proxy_async();
    __syncthreads();  // step kt is in shared memory; every wgmma of step kt - 2 has finished
    if (kt + PREFETCH < KT) load(smem0 + ws * STAGE_BYTES, (kt + PREFETCH) * BK);
    cp_async_commit();
    ws = ws == STAGES - 1 ? 0 : ws + 1;

    const unsigned long long stage = (unsigned)(rs * STAGE_BYTES) >> 4;
#pragma unroll
    for (int i = 0; i < MT; ++i) fence_operands(acc[i], ACC);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      const unsigned long long bd = b_desc0 + stage + (kk * 2048 >> 4);
#pragma unroll
      for (int i = 0; i < MT; ++i)
        wgmma_tile(acc[i], a_desc0 + stage + ((i * 64 * 128 + kk * 32) >> 4), bd);
    }
    wgmma_commit();
    wgmma_wait<1>();  // step kt - 1 done: its stage is free by the next barrier
#pragma unroll
    for (int i = 0; i < MT; ++i) fence_operands(acc[i], ACC);
    rs = rs == STAGES - 1 ? 0 : rs + 1;
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < MT; ++i) fence_operands(acc[i], ACC);

  // Accumulator j of a 64-row tile, per thread: rows warp * 16 + lane / 4 (+ 8 for j % 4 >= 2),
  // columns 8 * (j / 4) + 2 * (lane % 4) + j % 2.
  const bool c_vec2 = (N % 2 == 0) && ((size_t)C % 4 == 0);
#if EPI == 1
  // Through shared memory: the tile in fp16, rows C_PITCH bytes apart (16 bytes of padding
  // against bank conflicts), then stored in whole 16-byte words, a row of the tile by BN / 8
  // neighbouring threads. Needs rows of C 16-byte aligned; other shapes store from registers.
  const bool c_vec8 = (N % 8 == 0) && ((size_t)C % 16 == 0);
  if (c_vec8) {
    cp_async_wait<0>();  // only empty groups are left; every wgmma has finished (above)
    __syncthreads();     // no thread reads a stage any more
    unsigned char* tile = smem_raw + (smem0 - smem_addr(smem_raw));
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int r = wg * WG_ROWS + i * 64 + warp * 16 + (lane >> 2);
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int c = j * 8 + (lane & 3) * 2;
        *reinterpret_cast<elem2_t*>(tile + r * C_PITCH + c * 2) =
            elem2_rn(acc[i][4 * j], acc[i][4 * j + 1]);
        *reinterpret_cast<elem2_t*>(tile + (r + 8) * C_PITCH + c * 2) =
            elem2_rn(acc[i][4 * j + 2], acc[i][4 * j + 3]);
      }
    }
    __syncthreads();
#pragma unroll 4
    for (int w = tid; w < BM * (BN / 8); w += THREADS) {
      const int r = w / (BN / 8), c = (w % (BN / 8)) * 8;
      const int m = bm + r, n = bn + c;
      if (m < M && n < N)
        *reinterpret_cast<uint4*>(C + (long long)m * N + n) =
            *reinterpret_cast<const uint4*>(tile + r * C_PITCH + c * 2);
    }
    return;
  }
#endif
#pragma unroll
  for (int i = 0; i < MT; ++i) {
    const int m = bm + wg * WG_ROWS + i * 64 + warp * 16 + (lane >> 2);
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int n = bn + j * 8 + (lane & 3) * 2;
      store2(C, M, N, c_vec2, m, n, acc[i][4 * j], acc[i][4 * j + 1]);
      store2(C, M, N, c_vec2, m + 8, n, acc[i][4 * j + 2], acc[i][4 * j + 3]);
    }
  }
}
