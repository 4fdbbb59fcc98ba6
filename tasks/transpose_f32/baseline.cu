// Baseline: the naive transpose, one thread per element in a 2-D grid over src: a warp reads 32
// consecutive elements of a src row (coalesced) and writes them down a dst column (32 separate
// rows of dst, strided by R).
// @kernel transpose_baseline
// @grid ceil_div(C, 32), ceil_div(R, 8)
// @block 32, 8

extern "C" __global__ void transpose_baseline(const float* src, float* dst, int R, int C) {
  const int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 8 + threadIdx.y;
  if (r < R && c < C) dst[(long long)c * R + r] = src[(long long)r * C + c];
}
