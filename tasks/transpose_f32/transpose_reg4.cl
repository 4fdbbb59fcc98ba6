// 4 x 4 blocks in registers, no local memory: each work-item reads four 16-byte rows of a 4 x 4
// block of src (vload4), transposes it in registers and writes four 16-byte rows of dst
// (vstore4). Blocks of matrices whose sides are not multiples of 4 go element by element.
// @kernel transpose_reg4
// @grid ceil_div(C, 4 * BX), ceil_div(R, 4 * BY)
// @block BX, BY
// @param BX in [8, 16, 32] default 16
// @param BY in [2, 4, 8, 16] default 4
// @constraint BX * BY <= max_work_group_size

__kernel void transpose_reg4(__global const float* restrict src, __global float* restrict dst,
                             int R, int C) {
  const int c0 = get_global_id(0) * 4, r0 = get_global_id(1) * 4;
  if (r0 >= R || c0 >= C) return;
  if (R % 4 == 0 && C % 4 == 0) {  // then r0 + 4 <= R and c0 + 4 <= C too
    __global const float* in = src + (long)r0 * C + c0;
    __global float* out = dst + (long)c0 * R + r0;
    const float4 a = vload4(0, in), b = vload4(0, in + C);
    const float4 c = vload4(0, in + 2L * C), d = vload4(0, in + 3L * C);
    vstore4((float4)(a.x, b.x, c.x, d.x), 0, out);
    vstore4((float4)(a.y, b.y, c.y, d.y), 0, out + R);
    vstore4((float4)(a.z, b.z, c.z, d.z), 0, out + 2L * R);
    vstore4((float4)(a.w, b.w, c.w, d.w), 0, out + 3L * R);
    return;
  }
  for (int j = 0; j < 4 && c0 + j < C; ++j)
    for (int i = 0; i < 4 && r0 + i < R; ++i)
      dst[(long)(c0 + j) * R + r0 + i] = src[(long)(r0 + i) * C + c0 + j];
}
