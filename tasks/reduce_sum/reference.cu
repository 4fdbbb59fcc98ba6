// Reference: one block of 1024 threads; each thread sums a strided share of x in double, then a
// shared-memory tree in double; the total is rounded to fp32 once. The workspaces are untouched.
// @kernel reduce_sum_reference
// @grid 1
// @block 1024

extern "C" __global__ void reduce_sum_reference(const float* x, float* out, float* partials,
                                                int* counter, int N) {
  __shared__ double buf[1024];
  double s = 0.0;
  for (int i = threadIdx.x; i < N; i += 1024) s += x[i];
  buf[threadIdx.x] = s;
  __syncthreads();
  for (int h = 512; h > 0; h >>= 1) {
    if (threadIdx.x < h) buf[threadIdx.x] += buf[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = (float)buf[0];
}
