// Baseline: one work-item per ray scanning every sphere from global memory (one address for the
// whole group), the nearest hit kept in registers.
// @kernel ray_sphere_baseline
// @grid ceil_div(R, BLOCK)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64

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

__kernel void ray_sphere_baseline(__global const float* restrict ray_o,
                                  __global const float* restrict ray_d,
                                  __global const float* restrict sph_c,
                                  __global const float* restrict sph_r,
                                  __global int* restrict hit_idx, __global float* restrict hit_t,
                                  int R, int S) {
  const int i = get_global_id(0);
  if (i >= R) return;
  const float ox = ray_o[3L * i], oy = ray_o[3L * i + 1], oz = ray_o[3L * i + 2];
  const float dx = ray_d[3L * i], dy = ray_d[3L * i + 1], dz = ray_d[3L * i + 2];
  const float a = fma(dx, dx, fma(dy, dy, dz * dz));
  float best = INFINITY;
  int idx = -1;
  for (int s = 0; s < S; ++s) {
    const float t = hit_distance(ox, oy, oz, dx, dy, dz, a, sph_c[3 * s], sph_c[3 * s + 1],
                                 sph_c[3 * s + 2], sph_r[s]);
    if (t > 0.0f && t < best) {
      best = t;
      idx = s;
    }
  }
  hit_idx[i] = idx;
  hit_t[i] = idx < 0 ? -1.0f : best;
}
