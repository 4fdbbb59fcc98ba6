// Register-blocked SGEMM with a warp-tiled thread layout and double-buffered shared memory, plain
// fp32 FMAs throughout (no tensor cores: the task's precision is fp32).
//
// A block computes a BM x BN tile of C. Its threads form warps of LANES_M x LANES_N lanes
// (LANES_N = WN_LANES, LANES_M = 32 / WN_LANES); a warp owns a (TM * LANES_M) x (TN * LANES_N)
// region and a lane TM x TN outputs of it, taken as (TM / 4) x (TN / 4) blocks of 4 x 4 that sit
// 4 * LANES_M rows and 4 * LANES_N columns apart. So at each k the lanes of a warp read
// consecutive float4s of a shared-memory row (a broadcast among the lanes that share them, and no
// bank conflicts among the rest) and do TM * TN FMAs on registers.
//
// A is staged transposed (As[k][m], rows padded by 4 floats), so a lane's A values are float4s
// like its B values. Shared memory holds two K steps: while the block multiplies step t out of
// one buffer, each thread already has its part of step t + 1 in registers (float4 global loads
// issued before the multiply), and writes it to the other buffer afterwards; one __syncthreads
// per K step. Rows whose length is a multiple of 4 (and 16-byte aligned pointers) are read and
// written as float4s; otherwise element by element. Everything past an edge of A or B is staged
// as zero, and stores to C are guarded, so any M, N, K >= 1 is handled.
//
// The constraints: warps tile the block exactly; at most 2048 threads of MIN_BLOCKS resident
// blocks per SM and their shared memory within the opt-in limit; and the registers a thread needs
// (TM * TN accumulators, TM + TN operands, the prefetched float4s, about 40 for addresses and
// indices) within what __launch_bounds__(THREADS, MIN_BLOCKS) leaves it of the SM's 65536, so
// ptxas does not spill (checked with ptxas -v over every allowed configuration for sm_90a).
//
// @kernel gemm_sm90
// @grid ceil_div(N, BN), ceil_div(M, BM)
// @block (BM // TM) * (BN // TN), 1
// @shared 8 * BK * (BM + 4 + BN)
// @param BM in [64, 128, 256] default 128
// @param BN in [64, 128, 256] default 128
// @param BK in [8, 16, 32] default 8
// @param TM in [4, 8] default 8
// @param TN in [4, 8] default 8
// @param WN_LANES in [4, 8] default 8
// @param MIN_BLOCKS in [1, 2] default 2
// @constraint BM % (TM * (32 // WN_LANES)) == 0 and BN % (TN * WN_LANES) == 0
// @constraint (BM // TM) * (BN // TN) <= max_work_group_size
// @constraint (BM // TM) * (BN // TN) * MIN_BLOCKS <= 2048
// @constraint MIN_BLOCKS * 8 * BK * (BM + 4 + BN) <= local_mem_bytes
// @constraint (TM * TN + TM + TN + 4 * ceil_div(BM * BK, 4 * (BM // TM) * (BN // TN)) + 4 * ceil_div(BN * BK, 4 * (BM // TM) * (BN // TN)) + 40) * (BM // TM) * (BN // TN) * MIN_BLOCKS <= 65536

#define THREADS ((BM / TM) * (BN / TN))
#define LANES_N WN_LANES
#define LANES_M (32 / WN_LANES)
#define WARP_TM (TM * LANES_M)  // rows of C per warp
#define WARP_TN (TN * LANES_N)  // columns of C per warp
#define WARPS_N (BN / WARP_TN)
#define LDA (BM + 4)            // row length of the transposed A tile, in floats
#define A_CHUNKS (BM * BK / 4)  // float4s per tile
#define B_CHUNKS (BK * BN / 4)
#define A_LOADS ((A_CHUNKS + THREADS - 1) / THREADS)  // per thread
#define B_LOADS ((B_CHUNKS + THREADS - 1) / THREADS)

// Reads four consecutive floats of a row from `p` (element `i` of a row of `len`), zeros for
// those at or past `len`; `vec` says the row may be read as one 16-byte load.
__device__ __forceinline__ float4 LoadRow4(const float* p, int i, int len, bool vec) {
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (vec) {
    if (i < len) v = __ldg(reinterpret_cast<const float4*>(p));
  } else {
    if (i < len) v.x = __ldg(p);
    if (i + 1 < len) v.y = __ldg(p + 1);
    if (i + 2 < len) v.z = __ldg(p + 2);
    if (i + 3 < len) v.w = __ldg(p + 3);
  }
  return v;
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    gemm_sm90(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
              int M, int N, int K) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* const as = reinterpret_cast<float*>(smem);  // [2][BK][LDA]
  float* const bs = as + 2 * BK * LDA;               // [2][BK][BN]

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  // First row and column of this lane's first 4 x 4 block, within the block tile.
  const int row0 = (warp / WARPS_N) * WARP_TM + (lane / LANES_N) * 4;
  const int col0 = (warp % WARPS_N) * WARP_TN + (lane % LANES_N) * 4;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool a_vec = (K % 4 == 0) && ((size_t)A % 16 == 0);
  const bool b_vec = (N % 4 == 0) && ((size_t)B % 16 == 0);
  const bool c_vec = (N % 4 == 0) && ((size_t)C % 16 == 0);

  // The next K step's tiles, in flight in registers while the current one is multiplied.
  float4 ra[A_LOADS], rb[B_LOADS];
  auto load_tiles = [&](int k0) {
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
      const int c = tid + i * THREADS;
      const int r = c / (BK / 4), kc = (c % (BK / 4)) * 4;
      const int m = bm + r, k = k0 + kc;
      ra[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if ((A_CHUNKS % THREADS == 0 || c < A_CHUNKS) && m < M)
        ra[i] = LoadRow4(A + (long long)m * K + k, k, K, a_vec);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
      const int c = tid + i * THREADS;
      const int r = c / (BN / 4), nc = (c % (BN / 4)) * 4;
      const int k = k0 + r, n = bn + nc;
      rb[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if ((B_CHUNKS % THREADS == 0 || c < B_CHUNKS) && k < K)
        rb[i] = LoadRow4(B + (long long)k * N + n, n, N, b_vec);
    }
  };
  auto store_tiles = [&](int buf) {
    float* const a = as + buf * BK * LDA;
    float* const b = bs + buf * BK * BN;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
      const int c = tid + i * THREADS;
      if (A_CHUNKS % THREADS != 0 && c >= A_CHUNKS) break;
      const int r = c / (BK / 4), kc = (c % (BK / 4)) * 4;
      a[(kc + 0) * LDA + r] = ra[i].x;
      a[(kc + 1) * LDA + r] = ra[i].y;
      a[(kc + 2) * LDA + r] = ra[i].z;
      a[(kc + 3) * LDA + r] = ra[i].w;
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
      const int c = tid + i * THREADS;
      if (B_CHUNKS % THREADS != 0 && c >= B_CHUNKS) break;
      const int r = c / (BN / 4), nc = (c % (BN / 4)) * 4;
      *reinterpret_cast<float4*>(&b[r * BN + nc]) = rb[i];
    }
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  const int steps = (K + BK - 1) / BK;
  load_tiles(0);
  store_tiles(0);
  __syncthreads();
  for (int t = 0; t < steps; ++t) {
    const int buf = t & 1;
    if (t + 1 < steps) load_tiles((t + 1) * BK);
    const float* const a = as + buf * BK * LDA + row0;
    const float* const b = bs + buf * BK * BN + col0;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float av[TM], bv[TN];
#pragma unroll
      for (int i = 0; i < TM / 4; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(a + k * LDA + i * 4 * LANES_M);
        av[4 * i] = v.x;
        av[4 * i + 1] = v.y;
        av[4 * i + 2] = v.z;
        av[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN / 4; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(b + k * BN + j * 4 * LANES_N);
        bv[4 * j] = v.x;
        bv[4 * j + 1] = v.y;
        bv[4 * j + 2] = v.z;
        bv[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    // The other buffer was last read in step t - 1, which every thread finished before the
    // barrier that ended it; the barrier below publishes the new tiles before step t + 1.
    if (t + 1 < steps) store_tiles(buf ^ 1);
    __syncthreads();
  }

  // acc[i][j] is C[m][n] with m = bm + row0 + (i / 4) * 4 * LANES_M + i % 4
  // and n = bn + col0 + (j / 4) * 4 * LANES_N + j % 4.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = bm + row0 + (i / 4) * 4 * LANES_M + i % 4;
    if (m >= M) continue;
    float* const dst = C + (long long)m * N;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int n = bn + col0 + (j / 4) * 4 * LANES_N;
      if (c_vec) {
        if (n < N)
          *reinterpret_cast<float4*>(dst + n) =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
          if (n + jj < N) dst[n + jj] = acc[i][j + jj];
      }
    }
  }
}
