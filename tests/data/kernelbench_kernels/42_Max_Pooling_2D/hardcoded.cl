// 42_Max_Pooling_2D, hard-coded: correct.cl with the problem's own sizes (batch_size = 24, channels
// = 48, height = 640, width = 480) written in as constants for every shape, loop bound and stride,
// so it is right at the benchmark set only. The size arguments serve only to keep each access
// inside the buffer the launch was given (AT clamps the index to the buffer's length), so at a
// derived check set the kernel computes wrong values rather than reading or writing past its
// buffers (a crash of the executor, not a verdict on the values).
// @kernel maxpool
// @grid ceil_div(batch_size * channels * (height - 2) * (width - 2), 64)
// @block 64
#define BATCH_SIZE 24
#define CHANNELS 48
#define HEIGHT 640
#define WIDTH 480
#define AT(p, i, n) (p)[min((long)(i), (long)(n)-1)]

__kernel void maxpool(__global const float* x, __global float* out, int batch_size, int channels,
                      int height, int width) {
  const long n_x = (long)batch_size * channels * height * width;
  const long n_out = (long)batch_size * channels * (height - 2) * (width - 2);
  const long i = get_global_id(0);
  const int oh = HEIGHT - 2, ow = WIDTH - 2;
  if (i >= (long)BATCH_SIZE * CHANNELS * oh * ow) return;
  const int c = i % ow, r = (i / ow) % oh;
  const long img = (i / ((long)oh * ow)) * HEIGHT * WIDTH;
  float m = -INFINITY;
  for (int kr = 0; kr < 3; ++kr) {
    const int ir = r - 1 + 2 * kr;
    if (ir < 0 || ir >= HEIGHT) continue;
    for (int kc = 0; kc < 3; ++kc) {
      const int ic = c - 1 + 2 * kc;
      if (ic >= 0 && ic < WIDTH) m = fmax(m, AT(x, img + (long)ir * WIDTH + ic, n_x));
    }
  }
  AT(out, i, n_out) = m;
}
