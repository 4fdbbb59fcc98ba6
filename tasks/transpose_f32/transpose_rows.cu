// Several rows per thread: a TILE x BLOCK_ROWS block moves a padded TILE x (TILE + 1) tile, each
// thread copying TILE / BLOCK_ROWS elements in each phase, so fewer threads keep more loads in
// flight and the tile's index arithmetic is shared.
// @kernel transpose_rows
// @grid ceil_div(C, TILE), ceil_div(R, TILE)
// @block TILE, BLOCK_ROWS
// @param TILE in [16, 32, 64] default 32
// @param BLOCK_ROWS in [2, 4, 8, 16] default 8
// @constraint TILE % BLOCK_ROWS == 0 and TILE * BLOCK_ROWS <= max_work_group_size
// @constraint TILE * (TILE + 1) * 4 <= local_mem_bytes

extern "C" __global__ void __launch_bounds__(TILE* BLOCK_ROWS)
    transpose_rows(const float* __restrict__ src, float* __restrict__ dst, int R, int C) {
  __shared__ float tile[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
  if (c0 + tx < C) {
#pragma unroll
    for (int j = ty; j < TILE; j += BLOCK_ROWS)
      if (r0 + j < R) tile[j][tx] = src[(long long)(r0 + j) * C + c0 + tx];
  }
  __syncthreads();
  // dst[c0 + j, r0 + tx] = src[r0 + tx, c0 + j] sits at tile[tx][j].
  if (r0 + tx < R) {
#pragma unroll
    for (int j = ty; j < TILE; j += BLOCK_ROWS)
      if (c0 + j < C) dst[(long long)(c0 + j) * R + r0 + tx] = tile[tx][j];
  }
}
