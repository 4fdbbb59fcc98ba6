// Tiled and padded: as the plain tiled transpose, but each tile row has one extra element
// (TILE x (TILE + 1)), so the column reads of the write phase fall in different banks.
// @kernel transpose_padded
// @grid ceil_div(C, TILE), ceil_div(R, TILE)
// @block TILE, TILE
// @param TILE in [8, 16, 32] default 32
// @constraint TILE * TILE <= max_work_group_size and TILE * (TILE + 1) * 4 <= local_mem_bytes

extern "C" __global__ void __launch_bounds__(TILE* TILE)
    transpose_padded(const float* __restrict__ src, float* __restrict__ dst, int R, int C) {
  __shared__ float tile[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r = blockIdx.y * TILE + ty, c = blockIdx.x * TILE + tx;
  if (r < R && c < C) tile[ty][tx] = src[(long long)r * C + c];
  __syncthreads();
  // Write the tile's transpose: threadIdx.x now runs along a dst row, and
  // dst[dr, dc] = src[dc, dr] sits at tile[tx][ty].
  const int dr = blockIdx.x * TILE + ty, dc = blockIdx.y * TILE + tx;
  if (dr < C && dc < R) dst[(long long)dr * R + dc] = tile[tx][ty];
}
