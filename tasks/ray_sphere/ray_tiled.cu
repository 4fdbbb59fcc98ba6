// Spheres staged through shared memory: one ray per thread; the block copies BLOCK spheres at a
// time into shared arrays (one sphere per thread, coalesced), and every thread tests its ray
// against the tile from shared memory, in sphere order.
// @kernel ray_tiled
// @grid ceil_div(R, BLOCK)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 128
// @constraint BLOCK <= max_work_group_size and 16 * BLOCK <= local_mem_bytes

// The hit distance of sphere (c, r) along o + t d, or -1 for none beyond 1e-4; a = d.d.
// Every kernel of this task evaluates exactly these operations (see task.toml).
__device__ __forceinline__ float hit_distance(float ox, float oy, float oz, float dx, float dy,
                                              float dz, float a, float cx, float cy, float cz,
                                              float r) {
  const float px = ox - cx, py = oy - cy, pz = oz - cz;
  const float b = fmaf(dx, px, fmaf(dy, py, dz * pz));
  const float q = fmaf(px, px, fmaf(py, py, fmaf(pz, pz, -(r * r))));
  const float disc = fmaf(b, b, -(a * q));
  if (disc < 0.0f) return -1.0f;
  const float sq = sqrtf(disc);
  const float t0 = (-b - sq) / a;
  if (t0 > 1e-4f) return t0;
  const float t1 = (-b + sq) / a;
  return t1 > 1e-4f ? t1 : -1.0f;
}
extern "C" __global__ void __launch_bounds__(BLOCK)
    ray_tiled(const float* __restrict__ ray_o, const float* __restrict__ ray_d,
              const float* __restrict__ sph_c, const float* __restrict__ sph_r,
              int* __restrict__ hit_idx, float* __restrict__ hit_t, int R, int S) {
  __shared__ float tcx[BLOCK], tcy[BLOCK], tcz[BLOCK], tr[BLOCK];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * BLOCK + tid;
  const bool live = i < R;  // every thread stays to stage spheres
  const long long k = live ? 3LL * i : 0;
  const float ox = ray_o[k], oy = ray_o[k + 1], oz = ray_o[k + 2];
  const float dx = ray_d[k], dy = ray_d[k + 1], dz = ray_d[k + 2];
  const float a = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
  float best = __int_as_float(0x7f800000);  // +inf
  int idx = -1;
  for (int s0 = 0; s0 < S; s0 += BLOCK) {
    const int s = s0 + tid;
    if (s < S) {
      tcx[tid] = sph_c[3 * s];
      tcy[tid] = sph_c[3 * s + 1];
      tcz[tid] = sph_c[3 * s + 2];
      tr[tid] = sph_r[s];
    }
    __syncthreads();
    const int n = min(BLOCK, S - s0);
    for (int j = 0; j < n; ++j) {
      const float t = hit_distance(ox, oy, oz, dx, dy, dz, a, tcx[j], tcy[j], tcz[j], tr[j]);
      if (t > 0.0f && t < best) {
        best = t;
        idx = s0 + j;
      }
    }
    __syncthreads();
  }
  if (!live) return;
  hit_idx[i] = idx;
  hit_t[i] = idx < 0 ? -1.0f : best;
}
