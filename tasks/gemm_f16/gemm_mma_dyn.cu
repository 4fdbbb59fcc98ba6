// gemm_mma with its pipeline in dynamic shared memory (@shared): tensor cores through inline PTX,
// mma.sync.aligned.m16n8k16 (fp16 in, fp32 accumulators), operands fetched from shared memory
// with ldmatrix (.trans for B, which is row-major K x N), and a STAGES-deep cp.async pipeline:
// the tiles of the next STAGES-1 K steps are in flight while the current one is multiplied, one
// __syncthreads per K step of 32. Static shared memory stops at 48 KB (three 128 x 128 stages);
// dynamic shared memory goes to the device's opt-in limit (227 KB on an H100 or H200), so larger
// tiles (128 x 256, 256 x 128) and deeper pipelines (4 to 6 stages) fit.
// A block of WARPS_M x WARPS_N warps computes a BM x BN tile of C, each warp a
// (BM/WARPS_M) x (BN/WARPS_N) sub-tile of 16 x 8 mma tiles. Tiles in shared memory are stored
// unpadded with the 16-byte chunks of each row XOR-swizzled by the row index, so ldmatrix reads
// are free of bank conflicts. Every thread's copy sources and destinations and ldmatrix addresses
// are computed once, so the K loop is mostly cp.async, ldmatrix and mma. cp.async moves 16 bytes
// at a time and zero-fills past the matrix edges when the rows are 16-byte aligned (K, N
// multiples of 8); otherwise the tiles are loaded with guarded scalar reads.
// @kernel gemm_mma_dyn
// @grid ceil_div(N, BN), ceil_div(M, BM)
// @block 32 * WARPS_M * WARPS_N, 1
// @shared STAGES * (BM + BN) * 64
// @param BM in [64, 128, 256] default 128
// @param BN in [64, 128, 256] default 256
// @param WARPS_M in [1, 2, 4] default 2
// @param WARPS_N in [1, 2, 4] default 4
// @param STAGES in [2, 3, 4, 5, 6] default 4
// @param MIN_BLOCKS in [1, 2] default 1
// @constraint BM % (16 * WARPS_M) == 0 and BN % (16 * WARPS_N) == 0
// @constraint (BM // WARPS_M // 16) * (BN // WARPS_N // 8) <= 32
// @constraint STAGES * (BM + BN) * 64 <= local_mem_bytes
#include <cuda_fp16.h>

#define BK 32
#define THREADS (32 * WARPS_M * WARPS_N)
#define WTM (BM / WARPS_M)
#define WTN (BN / WARPS_N)
#define MI (WTM / 16)
#define NI (WTN / 8)
#define A_CHUNKS (BM * BK / 8)  // 16-byte chunks per tile
#define B_CHUNKS (BK * BN / 8)
#define A_LOADS ((A_CHUNKS + THREADS - 1) / THREADS)  // per thread
#define B_LOADS ((B_CHUNKS + THREADS - 1) / THREADS)
#define A_STAGE_BYTES (BM * BK * 2)
#define B_STAGE_BYTES (BK * BN * 2)

// Offsets (in halves) of element (r, k) of the BM x BK A tile and (k, n) of the BK x BN B tile:
// 16-byte chunk c of a row is stored at chunk c ^ f(row), so the 8 rows one ldmatrix reads at
// the same logical chunk land in 8 different bank groups.
__device__ __forceinline__ int a_off(int r, int k) {
  return r * BK + ((((k >> 3) ^ (r >> 1)) & 3) << 3) + (k & 7);
}
__device__ __forceinline__ int b_off(int k, int n) {
  return k * BN + (((n >> 3) ^ (k & 7)) << 3) + (n & 7);
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously; bytes past src_bytes (0 or 16) are zero-filled.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// Eight halves of a row, zeros past `left` valid elements, as one 16-byte word.
__device__ __forceinline__ uint4 gather8(const __half* src, int left) {
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned lo = 2 * i < left ? __half_as_ushort(src[2 * i]) : 0u;
    const unsigned hi = 2 * i + 1 < left ? __half_as_ushort(src[2 * i + 1]) : 0u;
    w[i] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// One K step's tiles with guarded scalar reads, for rows that are not 16-byte aligned.
__device__ __forceinline__ void load_tiles_scalar(__half* As, __half* Bs, const __half* A,
                                                  const __half* B, int M, int N, int K, int bm,
                                                  int bn, int k0, int tid) {
  for (int c = tid; c < A_CHUNKS; c += THREADS) {
    const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
    const int m = bm + r, k = k0 + kc;
    *reinterpret_cast<uint4*>(As + a_off(r, kc)) =
        gather8(A + (long long)m * K + k, m < M ? K - k : 0);
  }
  for (int c = tid; c < B_CHUNKS; c += THREADS) {
    const int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
    const int k = k0 + r, n = bn + nc;
    *reinterpret_cast<uint4*>(Bs + b_off(r, nc)) =
        gather8(B + (long long)k * N + n, k < K ? N - n : 0);
  }
}

__device__ __forceinline__ void ldmatrix_x4(unsigned* r, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned* r, unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void mma16816(float* d, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two horizontally adjacent results of row m, columns n and n + 1 (n even).
__device__ __forceinline__ void store2(__half* C, int M, int N, bool vec2, int m, int n, float x,
                                       float y) {
  if (m >= M) return;
  __half* dst = C + (long long)m * N + n;
  if (vec2) {
    if (n < N) *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(x, y);
  } else {
    if (n < N) dst[0] = __float2half_rn(x);
    if (n + 1 < N) dst[1] = __float2half_rn(y);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    gemm_mma_dyn(const __half* __restrict__ A, const __half* __restrict__ B, __half* __restrict__ C,
                 int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  __half* const As = reinterpret_cast<__half*>(smem);  // STAGES tiles of BM x BK
  __half* const Bs = As + STAGES * BM * BK;            // STAGES tiles of BK x BN
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool vec = (K % 8 == 0) && (N % 8 == 0) && ((size_t)A % 16 == 0) && ((size_t)B % 16 == 0);
  const bool c_vec2 = (N % 2 == 0) && ((size_t)C % 4 == 0);
  const unsigned as0 = smem_addr(As), bs0 = smem_addr(Bs);

  // This thread's copies: A chunk c = tid + t * THREADS is row c / 4, k offset (c % 4) * 8 of the
  // tile; B chunk c is row c / (BN / 8), n offset (c % (BN / 8)) * 8. A copy from outside the
  // matrix reads 0 bytes (zero fill) from the matrix's first element.
  const __half* a_src[A_LOADS];
  unsigned a_dst[A_LOADS];
  int a_k[A_LOADS];
  bool a_row_in[A_LOADS];
#pragma unroll
  for (int t = 0; t < A_LOADS; ++t) {
    const int c = min(tid + t * THREADS, A_CHUNKS - 1);
    const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
    a_row_in[t] = bm + r < M;
    a_src[t] = A + (long long)(a_row_in[t] ? bm + r : 0) * K + kc;
    a_dst[t] = as0 + 2 * a_off(r, kc);
    a_k[t] = kc;
  }
  const __half* b_src[B_LOADS];
  unsigned b_dst[B_LOADS];
  int b_k[B_LOADS];
  bool b_col_in[B_LOADS];
#pragma unroll
  for (int t = 0; t < B_LOADS; ++t) {
    const int c = min(tid + t * THREADS, B_CHUNKS - 1);
    const int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
    b_col_in[t] = bn + nc < N;
    b_src[t] = B + (long long)r * N + (b_col_in[t] ? bn + nc : 0);
    b_dst[t] = bs0 + 2 * b_off(r, nc);
    b_k[t] = r;
  }
  // The copies of K step k0 into stage s (16-byte path).
  auto load_async = [&](int s, int k0) {
#pragma unroll
    for (int t = 0; t < A_LOADS; ++t) {
      if (A_CHUNKS % THREADS == 0 || tid + t * THREADS < A_CHUNKS) {
        const bool in = a_row_in[t] && k0 + a_k[t] < K;
        cp_async16(a_dst[t] + s * A_STAGE_BYTES, in ? a_src[t] + k0 : A, in ? 16 : 0);
      }
    }
    const long long b_step = (long long)k0 * N;
#pragma unroll
    for (int t = 0; t < B_LOADS; ++t) {
      if (B_CHUNKS % THREADS == 0 || tid + t * THREADS < B_CHUNKS) {
        const bool in = b_col_in[t] && k0 + b_k[t] < K;
        cp_async16(b_dst[t] + s * B_STAGE_BYTES, in ? b_src[t] + b_step : B, in ? 16 : 0);
      }
    }
  };
  auto load = [&](int s, int k0) {
    if (vec)
      load_async(s, k0);
    else
      load_tiles_scalar(As + s * BM * BK, Bs + s * BK * BN, A, B, M, N, K, bm, bn, k0, tid);
  };

  // ldmatrix addresses in stage 0: A rows wm * WTM + (lane & 15), k (lane >> 4) * 8 of each
  // k16 half q (row + 16 i keeps the swizzle, so mma row i adds i * 16 rows); B rows k
  // (lane & 15) of half q, columns wn * WTN + 16 j2 + (lane >> 4) * 8.
  unsigned a_ld[BK / 16], b_ld[NI / 2];
#pragma unroll
  for (int q = 0; q < BK / 16; ++q)
    a_ld[q] = as0 + 2 * a_off(wm * WTM + (lane & 15), q * 16 + (lane >> 4) * 8);
#pragma unroll
  for (int j2 = 0; j2 < NI / 2; ++j2)
    b_ld[j2] = bs0 + 2 * b_off(lane & 15, wn * WTN + j2 * 16 + (lane >> 4) * 8);

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  const int KT = (K + BK - 1) / BK;
  // Group s of cp.async copies holds K step s; groups are committed even when empty so that
  // "all but the newest STAGES-2 groups done" always means "K step kt has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) load(s, s * BK);
    cp_async_commit();
  }

  int s = 0;  // kt % STAGES
  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();  // step kt visible to all; everyone is done with step kt-1's stage
    const int next = kt + STAGES - 1;
    if (next < KT) load(s == 0 ? STAGES - 1 : s - 1, next * BK);
    cp_async_commit();

#pragma unroll
    for (int q = 0; q < BK / 16; ++q) {
      unsigned a[MI][4], b[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) ldmatrix_x4(a[i], a_ld[q] + s * A_STAGE_BYTES + i * 16 * BK * 2);
#pragma unroll
      for (int j2 = 0; j2 < NI / 2; ++j2) {
        unsigned r[4];
        ldmatrix_x4_trans(r, b_ld[j2] + s * B_STAGE_BYTES + q * 16 * BN * 2);
        b[2 * j2][0] = r[0];
        b[2 * j2][1] = r[1];
        b[2 * j2 + 1][0] = r[2];
        b[2 * j2 + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) mma16816(acc[i][j], a[i], b[j]);
    }
    s = s == STAGES - 1 ? 0 : s + 1;
  }

#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j) {
      const int m = bm + wm * WTM + i * 16 + (lane >> 2);
      const int n = bn + wn * WTN + j * 8 + (lane & 3) * 2;
      store2(C, M, N, c_vec2, m, n, acc[i][j][0], acc[i][j][1]);
      store2(C, M, N, c_vec2, m + 8, n, acc[i][j][2], acc[i][j][3]);
    }
}
