// Spheres staged through local memory: one ray per work-item; the group copies BLOCK spheres at
// a time into local arrays (one sphere per work-item), and every work-item tests its ray against
// the tile from local memory, in sphere order.
// @kernel ray_tiled
// @grid ceil_div(R, BLOCK)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64
// @constraint BLOCK <= max_work_group_size and 16 * BLOCK <= local_mem_bytes

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
__kernel void ray_tiled(__global const float* restrict ray_o, __global const float* restrict ray_d,
                        __global const float* restrict sph_c, __global const float* restrict sph_r,
                        __global int* restrict hit_idx, __global float* restrict hit_t, int R,
                        int S) {
  __local float tcx[BLOCK], tcy[BLOCK], tcz[BLOCK], tr[BLOCK];
  const int tid = get_local_id(0);
  const int i = get_global_id(0);
  const bool live = i < R;  // every work-item stays to stage spheres
  const long k = live ? 3L * i : 0;
  const float ox = ray_o[k], oy = ray_o[k + 1], oz = ray_o[k + 2];
  const float dx = ray_d[k], dy = ray_d[k + 1], dz = ray_d[k + 2];
  const float a = fma(dx, dx, fma(dy, dy, dz * dz));
  float best = INFINITY;
  int idx = -1;
  for (int s0 = 0; s0 < S; s0 += BLOCK) {
    const int s = s0 + tid;
    if (s < S) {
      tcx[tid] = sph_c[3 * s];
      tcy[tid] = sph_c[3 * s + 1];
      tcz[tid] = sph_c[3 * s + 2];
      tr[tid] = sph_r[s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int n = min(BLOCK, S - s0);
    for (int j = 0; j < n; ++j) {
      const float t = hit_distance(ox, oy, oz, dx, dy, dz, a, tcx[j], tcy[j], tcz[j], tr[j]);
      if (t > 0.0f && t < best) {
        best = t;
        idx = s0 + j;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (!live) return;
  hit_idx[i] = idx;
  hit_t[i] = idx < 0 ? -1.0f : best;
}
