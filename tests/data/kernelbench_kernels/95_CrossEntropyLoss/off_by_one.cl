// 95_CrossEntropyLoss, off by one: correct.cl except that the row loop stops one short: the last row's loss is left out of the mean (the one output), so it differs from the
// module in exactly one element at every size set.
// in one launch: a single work-group, each work-item taking every 64th row, the partial sums
// added in local memory.
// @kernel cross_entropy
// @grid 1
// @block 64
__kernel void cross_entropy(__global const float* predictions, __global const long* targets,
                            __global float* out, int batch_size, int num_classes) {
  __local float red[64];
  const int t = get_local_id(0);
  float loss = 0.0f;
  for (int r = t; r < batch_size - 1; r += 64) {
    __global const float* p = predictions + (long)r * num_classes;
    float m = -INFINITY;
    for (int j = 0; j < num_classes; ++j) m = fmax(m, p[j]);
    float s = 0.0f;
    for (int j = 0; j < num_classes; ++j) s += exp(p[j] - m);
    loss += m + log(s) - p[targets[r]];
  }
  red[t] = loss;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = 32; h > 0; h >>= 1) {
    if (t < h) red[t] += red[t + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) out[0] = red[0] / batch_size;
}
