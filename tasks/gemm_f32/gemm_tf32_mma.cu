// TF32 tensor cores for the fp32 GEMM: this kernel belongs to the task's tf32 setting
// (precision = "tf32"), not to gemm_f32 as it stands (precision = "fp32"). It rounds every operand
// to TF32 (10 mantissa bits, cvt.rna) before the multiply, so its products carry relative errors
// near 2^-11 instead of 2^-24; the fp32 precision probe is built to catch exactly that and would
// call it incorrect. Accumulation stays in fp32. That is why it is not among gemm_f32's templates.
//
// mma.sync.aligned.m16n8k8 (tf32 A and B, fp32 C) through inline PTX. A block of WARPS_M x WARPS_N
// warps computes a BM x BN tile of C, each warp a (BM / WARPS_M) x (BN / WARPS_N) sub-tile made of
// 16 x 8 mma tiles. Tiles of A (BM x BK) and B (BK x BN) are copied to shared memory as fp32 with
// cp.async in a STAGES-deep ring: while K step t is multiplied, steps t + 1 .. t + STAGES - 1
// are in flight, and there is one __syncthreads per step. The fragments are read from shared
// memory one float at a time and converted to TF32 there. Rows are padded so those reads are free
// of bank conflicts: A rows by 4 floats (lanes g, t read (g, t): banks 4g + t), B rows by 8
// (lanes read (t, g): banks 8t + g).
//
// Rows whose length is a multiple of 4 (with 16-byte aligned pointers) are copied 16 bytes at a
// time, and a chunk past an edge is zero-filled by cp.async's source size; otherwise each element
// is copied alone (4 bytes, or zero-filled past the edge). Stores to C are guarded, so any M, N, K
// >= 1 is handled.
//
// The constraints: warps tile the block in whole mma tiles; at most 32 of them per warp (128
// accumulators); MIN_BLOCKS resident blocks' shared memory within the opt-in limit; and the
// accumulators, two registers per 16-byte chunk a thread copies, and about 80 for fragments and
// addresses within 255 and within what __launch_bounds__(THREADS, MIN_BLOCKS) leaves a thread,
// so ptxas does not spill (checked with ptxas -v over every allowed configuration for sm_90a).
//
// @kernel gemm_tf32_mma
// @grid ceil_div(N, BN), ceil_div(M, BM)
// @block 32 * WARPS_M * WARPS_N, 1
// @shared STAGES * (BM * (BK + 4) + BK * (BN + 8)) * 4
// @param BM in [64, 128, 256] default 128
// @param BN in [64, 128, 256] default 128
// @param BK in [16, 32] default 32
// @param WARPS_M in [1, 2, 4] default 2
// @param WARPS_N in [1, 2, 4] default 4
// @param STAGES in [2, 3, 4] default 3
// @param MIN_BLOCKS in [1, 2] default 1
// @constraint BM % (16 * WARPS_M) == 0 and BN % (8 * WARPS_N) == 0
// @constraint (BM // WARPS_M // 16) * (BN // WARPS_N // 8) <= 32
// @constraint 32 * WARPS_M * WARPS_N <= max_work_group_size
// @constraint MIN_BLOCKS * STAGES * (BM * (BK + 4) + BK * (BN + 8)) * 4 <= local_mem_bytes
// @constraint 4 * (BM // WARPS_M // 16) * (BN // WARPS_N // 8) + 2 * ceil_div(BM * BK, 128 * WARPS_M * WARPS_N) + 2 * ceil_div(BK * BN, 128 * WARPS_M * WARPS_N) + 80 <= 255
// @constraint (4 * (BM // WARPS_M // 16) * (BN // WARPS_N // 8) + 2 * ceil_div(BM * BK, 128 * WARPS_M * WARPS_N) + 2 * ceil_div(BK * BN, 128 * WARPS_M * WARPS_N) + 80) * 32 * WARPS_M * WARPS_N * MIN_BLOCKS <= 65536

#define THREADS (32 * WARPS_M * WARPS_N)
#define MI (BM / WARPS_M / 16)  // mma tiles per warp along M
#define NI (BN / WARPS_N / 8)   // and along N
#define LDA (BK + 4)            // shared-memory row lengths, in floats
#define LDB (BN + 8)
#define A_STAGE (BM * LDA)  // floats per stage
#define B_STAGE (BK * LDB)
#define A_CHUNKS (BM * BK / 4)  // 16-byte chunks per tile
#define B_CHUNKS (BK * BN / 4)
#define A_LOADS ((A_CHUNKS + THREADS - 1) / THREADS)  // per thread
#define B_LOADS ((B_CHUNKS + THREADS - 1) / THREADS)

__device__ __forceinline__ unsigned SharedAddress(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies the 16 bytes at `src` to shared `dst`, or zeros when `full` is false (nothing is read).
__device__ __forceinline__ void CopyChunk(float* dst, const float* src, bool full) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SharedAddress(dst)),
               "l"(src), "r"(full ? 16 : 0));
}

// Copies one float, or a zero when `inside` is false.
__device__ __forceinline__ void CopyFloat(float* dst, const float* src, bool inside) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(SharedAddress(dst)), "l"(src),
               "r"(inside ? 4 : 0));
}

// Copies four consecutive floats of a row (element `i` of a row of `len` at `src`) to `dst`, zeros
// for those at or past `len`. The source address of a zero-fill is `base` (never read).
__device__ __forceinline__ void CopyRow4(float* dst, const float* src, const float* base, int i,
                                         int len, bool vec) {
  if (vec) {
    CopyChunk(dst, i < len ? src : base, i < len);
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e) CopyFloat(dst + e, i + e < len ? src + e : base, i + e < len);
  }
}

__device__ __forceinline__ void CommitGroup() {
  asm volatile("cp.async.commit_group;\n" ::);
}

// Waits until at most `kPending` of this thread's commit groups are still in flight.
template <int kPending>
__device__ __forceinline__ void WaitGroups() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// x rounded to the nearest TF32 value (ties away from zero), as the mma's operand register.
__device__ __forceinline__ unsigned ToTf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// d += a * b for one 16 x 8 tile, K = 8; a, b and d hold this lane's parts of the fragments:
// with g = lane / 4 and t = lane % 4, a = A(g, t), A(g + 8, t), A(g, t + 4), A(g + 8, t + 4),
// b = B(t, g), B(t + 4, g), d = D(g, 2t), D(g, 2t + 1), D(g + 8, 2t), D(g + 8, 2t + 1).
__device__ __forceinline__ void MmaTf32(float (&d)[4], const unsigned (&a)[4],
                                        const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    gemm_tf32_mma(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  int M, int N, int K) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* const as = reinterpret_cast<float*>(smem);  // [STAGES][BM][LDA]
  float* const bs = as + STAGES * A_STAGE;           // [STAGES][BK][LDB]

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;  // the mma fragments' group and thread-in-group
  const int wm = (warp / WARPS_N) * (BM / WARPS_M), wn = (warp % WARPS_N) * (BN / WARPS_N);
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool a_vec = (K % 4 == 0) && ((size_t)A % 16 == 0);
  const bool b_vec = (N % 4 == 0) && ((size_t)B % 16 == 0);
  const bool c_vec = (N % 2 == 0) && ((size_t)C % 8 == 0);

  auto load_stage = [&](int stage, int k0) {
    float* const a = as + stage * A_STAGE;
    float* const b = bs + stage * B_STAGE;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
      const int c = tid + i * THREADS;
      if (A_CHUNKS % THREADS != 0 && c >= A_CHUNKS) break;
      const int r = c / (BK / 4), kc = (c % (BK / 4)) * 4;
      const int m = bm + r, k = k0 + kc;
      // A row past M reads as a row of length 0: all zeros.
      CopyRow4(a + r * LDA + kc, A + (long long)m * K + k, A, k, m < M ? K : 0, a_vec);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
      const int c = tid + i * THREADS;
      if (B_CHUNKS % THREADS != 0 && c >= B_CHUNKS) break;
      const int r = c / (BN / 4), nc = (c % (BN / 4)) * 4;
      const int k = k0 + r, n = bn + nc;
      CopyRow4(b + r * LDB + nc, B + (long long)k * N + n, B, n, k < K ? N : 0, b_vec);
    }
  };

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  const int steps = (K + BK - 1) / BK;
  // Prologue: the first STAGES - 1 steps in flight, one commit group each (empty past the end,
  // so the group count stays in step with the wait below).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < steps) load_stage(s, s * BK);
    CommitGroup();
  }

  for (int step = 0; step < steps; ++step) {
    // Step `step`'s group is complete once at most STAGES - 2 younger ones are pending.
    WaitGroups<STAGES - 2>();
    __syncthreads();
    // The stage refilled here was multiplied in step - 1, which every thread finished before the
    // barrier above.
    const int next = step + STAGES - 1;
    if (next < steps) load_stage(next % STAGES, next * BK);
    CommitGroup();

    const float* const a = as + (step % STAGES) * A_STAGE;
    const float* const b = bs + (step % STAGES) * B_STAGE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      unsigned af[MI][4], bf[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        const float* const p = a + (wm + i * 16 + g) * LDA + kk + t;
        af[i][0] = ToTf32(p[0]);
        af[i][1] = ToTf32(p[8 * LDA]);
        af[i][2] = ToTf32(p[4]);
        af[i][3] = ToTf32(p[8 * LDA + 4]);
      }
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const float* const p = b + (kk + t) * LDB + wn + j * 8 + g;
        bf[j][0] = ToTf32(p[0]);
        bf[j][1] = ToTf32(p[4 * LDB]);
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) MmaTf32(acc[i][j], af[i], bf[j]);
    }
  }
  WaitGroups<0>();

  // acc[i][j][q] is C[wm + i * 16 + g + 8 * (q / 2)][wn + j * 8 + 2 * t + q % 2] of the tile.
#pragma unroll
  for (int i = 0; i < MI; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = bm + wm + i * 16 + g + 8 * h;
      if (m >= M) continue;
      float* const dst = C + (long long)m * N;
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int n = bn + wn + j * 8 + 2 * t;
        if (c_vec) {
          if (n < N)
            *reinterpret_cast<float2*>(dst + n) =
                make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
        } else {
          if (n < N) dst[n] = acc[i][j][2 * h];
          if (n + 1 < N) dst[n + 1] = acc[i][j][2 * h + 1];
        }
      }
    }
  }
}
