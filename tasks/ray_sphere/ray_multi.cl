// Several rays per work-item: each work-item traces RPT rays (BLOCK apart) and tests each sphere
// it reads from the local float4 tile against all of them, so one local read feeds RPT tests
// and the RPT tests are independent work.
// @kernel ray_multi
// @grid ceil_div(R, BLOCK * RPT)
// @block BLOCK
// @param BLOCK in [16, 32, 64, 128] default 32
// @param RPT in [1, 2, 4, 8] default 4
// @param TILE in [128, 256, 512] default 256
// @constraint BLOCK <= max_work_group_size and 16 * TILE <= local_mem_bytes

// The hit distance of sphere (c, r) along o + t d, or -1 for none beyond 1e-4; a = d.d.
// Every kernel of this task evaluates exactly these operations (see task.toml).
float hit_distance(float ox, float oy, float oz, float dx, float dy, float dz, float a, float cx,
                   float cy, float cz, float r) {
  const float px = ox - cx, py = oy - cy, pz = oz - cz;
  const float b = fma(dx, px, fma(dy, py, dz * pz));
  const float q = fma(px, px, fma(py, py, fma(pz, pz, -(r * r))));
  const float disc = fma(b, b, -(a * q));
  if (disc < 0.0f) return -1.0f;
  const float sq = sqrt(disc);
  const float t0 = (-b - sq) / a;
  if (t0 > 1e-4f) return t0;
  const float t1 = (-b + sq) / a;
  return t1 > 1e-4f ? t1 : -1.0f;
}
__kernel void ray_multi(__global const float* restrict ray_o, __global const float* restrict ray_d,
                        __global const float* restrict sph_c, __global const float* restrict sph_r,
                        __global int* restrict hit_idx, __global float* restrict hit_t, int R,
                        int S) {
  __local float4 tile[TILE];
  const int tid = get_local_id(0);
  const int first = get_group_id(0) * BLOCK * RPT + tid;
  float ox[RPT], oy[RPT], oz[RPT], dx[RPT], dy[RPT], dz[RPT], a[RPT], best[RPT];
  int idx[RPT];
  for (int u = 0; u < RPT; ++u) {
    const int i = first + u * BLOCK;
    const long k = i < R ? 3L * i : 0;  // work-items past R trace ray 0 and write nothing
    ox[u] = ray_o[k], oy[u] = ray_o[k + 1], oz[u] = ray_o[k + 2];
    dx[u] = ray_d[k], dy[u] = ray_d[k + 1], dz[u] = ray_d[k + 2];
    a[u] = fma(dx[u], dx[u], fma(dy[u], dy[u], dz[u] * dz[u]));
    best[u] = INFINITY;
    idx[u] = -1;
  }
  for (int s0 = 0; s0 < S; s0 += TILE) {
    for (int j = tid; j < TILE && s0 + j < S; j += BLOCK) {
      const int s = s0 + j;
      tile[j] = (float4)(vload3(s, sph_c), sph_r[s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int n = min(TILE, S - s0);
    for (int j = 0; j < n; ++j) {
      const float4 sp = tile[j];
      for (int u = 0; u < RPT; ++u) {
        const float t =
            hit_distance(ox[u], oy[u], oz[u], dx[u], dy[u], dz[u], a[u], sp.x, sp.y, sp.z, sp.w);
        if (t > 0.0f && t < best[u]) {
          best[u] = t;
          idx[u] = s0 + j;
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int u = 0; u < RPT; ++u) {
    const int i = first + u * BLOCK;
    if (i < R) {
      hit_idx[i] = idx[u];
      hit_t[i] = idx[u] < 0 ? -1.0f : best[u];
    }
  }
}
