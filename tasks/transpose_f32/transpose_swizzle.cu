// 16-byte accesses on both sides of a TR x TC tile: each thread reads 4 x 4 blocks of src as four
// float4 rows (a warp covers whole 256-byte runs of src rows), transposes each block in registers
// and stores its four float4 (now dst rows) into shared memory laid out as the dst tile, TC rows
// of TR / 4 float4. The float4 columns are XOR-swizzled by the row (group g of row j sits at
// g ^ ((j / 4) % 8)), so the column-wise stores of the first phase and the row-wise loads of the
// second are both free of bank conflicts without padding (padding would break the float4
// alignment). After one barrier every thread copies float4 runs of the dst tile out, a warp
// writing whole 256-byte runs of dst rows. The tile has no padding, so TR * TC * 4 bytes of
// shared memory, and no thread indexing beyond one flat loop per phase.
// The vector path needs R % 4 == 0, C % 4 == 0 (every 4 x 4 block then lies wholly inside or
// outside the matrix, and rows stay 16-byte aligned) and 16-byte aligned src and dst; otherwise
// the same tile goes through shared memory one element at a time (chosen at run time), so any
// size is correct. ORDER 0 walks the grid along src rows (consecutive blocks read adjacent runs
// of the same src rows), ORDER 1 along dst rows. HINT 1 streams src and dst past the caches
// (ld.global.cs / st.global.cs) instead of ld.global.nc and plain stores.
// @kernel transpose_swizzle
// @grid ceil_div(C, TC) * (1 - ORDER) + ceil_div(R, TR) * ORDER, ceil_div(R, TR) * (1 - ORDER) + ceil_div(C, TC) * ORDER
// @block BLOCK, 1
// @param TR in [32, 64, 128] default 64
// @param TC in [32, 64, 128] default 64
// @param BLOCK in [64, 128, 256, 512] default 256
// @param ORDER in [0, 1] default 0
// @param HINT in [0, 1] default 0
// @constraint BLOCK <= max_work_group_size
// @constraint TR * TC * 4 <= 49152
// @constraint (TR // 4) * (TC // 4) % BLOCK == 0

constexpr int kGroups = TR / 4;               // float4 per row of the dst tile
constexpr int kBlocks = (TR / 4) * (TC / 4);  // 4 x 4 blocks per tile
constexpr int kPerThread = kBlocks / BLOCK;   // of them per thread (the same count of float4
                                              // per thread in the write phase: TC * TR / 4)

__device__ __forceinline__ float4 Load(const float4* p) {
#if HINT == 1
  return __ldcs(p);
#else
  return __ldg(p);
#endif
}

__device__ __forceinline__ void Store(float4* p, float4 v) {
#if HINT == 1
  __stcs(p, v);
#else
  *p = v;
#endif
}

// The float4 slot of group g in row j of the dst tile.
__device__ __forceinline__ int Slot(int j, int g) {
  return j * kGroups + (g ^ ((j >> 2) & 7));
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    transpose_swizzle(const float* __restrict__ src, float* __restrict__ dst, int R, int C) {
  __shared__ float4 tile[TC * kGroups];
  const int t = threadIdx.x;
  const int bx = ORDER == 0 ? blockIdx.x : blockIdx.y, by = ORDER == 0 ? blockIdx.y : blockIdx.x;
  const int r0 = by * TR, c0 = bx * TC;  // the tile: src rows [r0, r0 + TR), cols [c0, c0 + TC)
  const bool vec =
      R % 4 == 0 && C % 4 == 0 && ((unsigned long long)src | (unsigned long long)dst) % 16 == 0;

  if (!vec) {  // element by element through the same shared memory, as floats [TR][TC]
    float* f = reinterpret_cast<float*>(tile);
    for (int e = t; e < TR * TC; e += BLOCK) {
      const int i = e / TC, j = e % TC;
      if (r0 + i < R && c0 + j < C) f[e] = src[(long long)(r0 + i) * C + c0 + j];
    }
    __syncthreads();
    for (int e = t; e < TR * TC; e += BLOCK) {
      const int j = e / TR, i = e % TR;  // dst[c0 + j, r0 + i] = src[r0 + i, c0 + j]
      if (r0 + i < R && c0 + j < C) dst[(long long)(c0 + j) * R + r0 + i] = f[i * TC + j];
    }
    return;
  }

  // Read: block q = (rb, cb) covers src rows r0 + 4 rb .. + 3, cols c0 + 4 cb .. + 3; cb runs
  // fastest across the threads, so a warp reads runs of TC / 4 float4 of four src rows. Every
  // load of the thread is issued before the first store to shared memory.
  float4 a[kPerThread][4];
#pragma unroll
  for (int n = 0; n < kPerThread; ++n) {
    const int q = t + n * BLOCK, rb = q / (TC / 4), cb = q % (TC / 4);
    const int r = r0 + 4 * rb, c = c0 + 4 * cb;
    if (r < R && c < C) {
      const float4* p = reinterpret_cast<const float4*>(src + (long long)r * C + c);
#pragma unroll
      for (int k = 0; k < 4; ++k) a[n][k] = Load(p + (long long)k * (C / 4));
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k) a[n][k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
  }
#pragma unroll
  for (int n = 0; n < kPerThread; ++n) {
    const int q = t + n * BLOCK, rb = q / (TC / 4), cb = q % (TC / 4);
    // dst row c0 + 4 cb + k, cols r0 + 4 rb .. + 3: column k of the block.
    tile[Slot(4 * cb + 0, rb)] = make_float4(a[n][0].x, a[n][1].x, a[n][2].x, a[n][3].x);
    tile[Slot(4 * cb + 1, rb)] = make_float4(a[n][0].y, a[n][1].y, a[n][2].y, a[n][3].y);
    tile[Slot(4 * cb + 2, rb)] = make_float4(a[n][0].z, a[n][1].z, a[n][2].z, a[n][3].z);
    tile[Slot(4 * cb + 3, rb)] = make_float4(a[n][0].w, a[n][1].w, a[n][2].w, a[n][3].w);
  }
  __syncthreads();

  // Write: float4 p = (j, g) is dst row c0 + j, cols r0 + 4 g .. + 3; g runs fastest.
#pragma unroll
  for (int n = 0; n < 4 * kPerThread; ++n) {
    const int p = t + n * BLOCK, j = p / kGroups, g = p % kGroups;
    if (c0 + j < C && r0 + 4 * g < R)
      Store(reinterpret_cast<float4*>(dst + (long long)(c0 + j) * R + r0 + 4 * g),
            tile[Slot(j, g)]);
  }
}
