// Several rays per thread: each thread traces RPT rays (BLOCK apart, so loads stay coalesced)
// and tests each sphere it reads from the shared float4 tile against all of them, so one
// shared-memory read feeds RPT tests and the RPT tests are independent work for the pipeline.
// @kernel ray_multi
// @grid ceil_div(R, BLOCK * RPT)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64
// @param RPT in [1, 2, 4, 8] default 4
// @param TILE in [128, 256, 512] default 256
// @constraint BLOCK <= max_work_group_size and 16 * TILE <= local_mem_bytes

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
    ray_multi(const float* __restrict__ ray_o, const float* __restrict__ ray_d,
              const float* __restrict__ sph_c, const float* __restrict__ sph_r,
              int* __restrict__ hit_idx, float* __restrict__ hit_t, int R, int S) {
  __shared__ float4 tile[TILE];
  const int tid = threadIdx.x;
  const int first = blockIdx.x * BLOCK * RPT + tid;
  float ox[RPT], oy[RPT], oz[RPT], dx[RPT], dy[RPT], dz[RPT], a[RPT], best[RPT];
  int idx[RPT];
#pragma unroll
  for (int u = 0; u < RPT; ++u) {
    const int i = first + u * BLOCK;
    const long long k = i < R ? 3LL * i : 0;  // threads past R trace ray 0 and write nothing
    ox[u] = ray_o[k], oy[u] = ray_o[k + 1], oz[u] = ray_o[k + 2];
    dx[u] = ray_d[k], dy[u] = ray_d[k + 1], dz[u] = ray_d[k + 2];
    a[u] = fmaf(dx[u], dx[u], fmaf(dy[u], dy[u], dz[u] * dz[u]));
    best[u] = __int_as_float(0x7f800000);  // +inf
    idx[u] = -1;
  }
  for (int s0 = 0; s0 < S; s0 += TILE) {
    for (int j = tid; j < TILE && s0 + j < S; j += BLOCK) {
      const int s = s0 + j;
      tile[j] = make_float4(sph_c[3 * s], sph_c[3 * s + 1], sph_c[3 * s + 2], sph_r[s]);
    }
    __syncthreads();
    const int n = min(TILE, S - s0);
    for (int j = 0; j < n; ++j) {
      const float4 sp = tile[j];
#pragma unroll
      for (int u = 0; u < RPT; ++u) {
        const float t =
            hit_distance(ox[u], oy[u], oz[u], dx[u], dy[u], dz[u], a[u], sp.x, sp.y, sp.z, sp.w);
        if (t > 0.0f && t < best[u]) {
          best[u] = t;
          idx[u] = s0 + j;
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int u = 0; u < RPT; ++u) {
    const int i = first + u * BLOCK;
    if (i < R) {
      hit_idx[i] = idx[u];
      hit_t[i] = idx[u] < 0 ? -1.0f : best[u];
    }
  }
}
