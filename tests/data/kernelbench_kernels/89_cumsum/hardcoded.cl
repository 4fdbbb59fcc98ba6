// 89_cumsum, hard-coded: correct.cl with the problem's own sizes (batch_size = 8192, row_shape_0 =
// 24576) written in as constants for every shape, loop bound and stride, so it is right at the
// benchmark set only. The size arguments serve only to keep each access inside the buffer the
// launch was given (AT clamps the index to the buffer's length), so at a derived check set the
// kernel computes wrong values rather than reading or writing past its buffers (a crash of the
// executor, not a verdict on the values).
// @kernel cumsum
// @grid ceil_div(batch_size, 16)
// @block 16
#define BATCH_SIZE 8192
#define ROW_SHAPE_0 24576
#define AT(p, i, n) (p)[min((long)(i), (long)(n)-1)]

__kernel void cumsum(__global const float* x, __global float* out, int batch_size,
                     int row_shape_0) {
  const long n = (long)batch_size * row_shape_0;
  const int row = get_global_id(0);
  if (row >= BATCH_SIZE) return;
  const long at = (long)row * ROW_SHAPE_0;
  float s = 0.0f;
  for (int j = 0; j < ROW_SHAPE_0; ++j) {
    s += AT(x, at + j, n);
    AT(out, at + j, n) = s;
  }
}
