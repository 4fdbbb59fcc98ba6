// Reference: one thread per output element dst[c, r], read from src[r, c].
// @kernel transpose_reference
// @grid ceil_div(R * C, 256)
// @block 256

extern "C" __global__ void transpose_reference(const float* src, float* dst, int R, int C) {
  long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= (long long)R * C) return;
  long long c = e / R, r = e % R;
  dst[e] = src[r * C + c];
}
