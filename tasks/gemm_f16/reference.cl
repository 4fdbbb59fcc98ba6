// Reference: one work-item per output element C[m, n], accumulating the K products in double and
// rounding once to fp16 (to bf16 under KF_BF16, the gemm_f16.bf16 variant).
// @kernel gemm_reference
// @grid ceil_div(N, 16), ceil_div(M, 16)
// @block 16, 16
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#if KF_BF16
// OpenCL has no bfloat16: its bits sit in a ushort, widened by a shift and narrowed to nearest
// even (a NaN kept a NaN).
typedef ushort elem_t;
float LoadElem(long i, __global const ushort* p) {
  return as_float((uint)p[i] << 16);
}
void StoreElem(float f, long i, __global ushort* p) {
  uint x = as_uint(f);
  p[i] = (x & 0x7fffffffu) > 0x7f800000u ? (ushort)((x >> 16) | 0x40u)
                                         : (ushort)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
#else
typedef half elem_t;
#define LoadElem(i, p) vload_half(i, p)
#define StoreElem(f, i, p) vstore_half_rte(f, i, p)
#endif

__kernel void gemm_reference(__global const elem_t* A, __global const elem_t* B, __global elem_t* C,
                             int M, int N, int K) {
  int n = get_global_id(0);
  int m = get_global_id(1);
  if (m >= M || n >= N) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k)
    acc += (double)LoadElem((long)m * K + k, A) * (double)LoadElem((long)k * N + n, B);
  StoreElem((float)acc, (long)m * N + n, C);
}
