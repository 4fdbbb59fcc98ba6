// 4 x 4 blocks in registers, no shared memory: each thread reads four 16-byte rows of a 4 x 4
// block of src (float4), transposes it in registers and writes four 16-byte rows of dst. Blocks
// on the ragged edge, or matrices whose sides are not multiples of 4 (rows then not 16-byte
// aligned), go element by element.
// @kernel transpose_reg4
// @grid ceil_div(C, 4 * BX), ceil_div(R, 4 * BY)
// @block BX, BY
// @param BX in [8, 16, 32] default 16
// @param BY in [2, 4, 8, 16] default 8
// @constraint BX * BY <= max_work_group_size

extern "C" __global__ void __launch_bounds__(BX* BY)
    transpose_reg4(const float* __restrict__ src, float* __restrict__ dst, int R, int C) {
  const int c0 = (blockIdx.x * BX + threadIdx.x) * 4, r0 = (blockIdx.y * BY + threadIdx.y) * 4;
  if (r0 >= R || c0 >= C) return;
  if (R % 4 == 0 && C % 4 == 0) {  // then r0 + 4 <= R and c0 + 4 <= C too
    const float* in = src + (long long)r0 * C + c0;
    float* out = dst + (long long)c0 * R + r0;
    const float4 a = *reinterpret_cast<const float4*>(in);
    const float4 b = *reinterpret_cast<const float4*>(in + C);
    const float4 c = *reinterpret_cast<const float4*>(in + 2LL * C);
    const float4 d = *reinterpret_cast<const float4*>(in + 3LL * C);
    *reinterpret_cast<float4*>(out) = make_float4(a.x, b.x, c.x, d.x);
    *reinterpret_cast<float4*>(out + R) = make_float4(a.y, b.y, c.y, d.y);
    *reinterpret_cast<float4*>(out + 2LL * R) = make_float4(a.z, b.z, c.z, d.z);
    *reinterpret_cast<float4*>(out + 3LL * R) = make_float4(a.w, b.w, c.w, d.w);
    return;
  }
  for (int j = 0; j < 4 && c0 + j < C; ++j)
    for (int i = 0; i < 4 && r0 + i < R; ++i)
      dst[(long long)(c0 + j) * R + r0 + i] = src[(long long)(r0 + i) * C + c0 + j];
}
