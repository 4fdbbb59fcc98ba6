// Tiled through shared memory: a TILE x TILE block reads a TILE x TILE tile of src with
// coalesced row reads, and after a barrier writes its transpose as coalesced dst rows. The tile
// is not padded, so the column reads of the write phase hit one bank TILE times over.
// @kernel transpose_tiled
// @grid ceil_div(C, TILE), ceil_div(R, TILE)
// @block TILE, TILE
// @param TILE in [8, 16, 32] default 32
// @constraint TILE * TILE <= max_work_group_size and TILE * TILE * 4 <= local_mem_bytes

extern "C" __global__ void __launch_bounds__(TILE* TILE)
    transpose_tiled(const float* __restrict__ src, float* __restrict__ dst, int R, int C) {
  __shared__ float tile[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int r = blockIdx.y * TILE + ty, c = blockIdx.x * TILE + tx;
  if (r < R && c < C) tile[ty][tx] = src[(long long)r * C + c];
  __syncthreads();
  // Write the tile's transpose: threadIdx.x now runs along a dst row, and
  // dst[dr, dc] = src[dc, dr] sits at tile[tx][ty].
  const int dr = blockIdx.x * TILE + ty, dc = blockIdx.y * TILE + tx;
  if (dr < C && dc < R) dst[(long long)dr * R + dc] = tile[tx][ty];
}
