// Merge-path CSR with a decoupled look-back across blocks, deterministic. Steps 1 to 3 are those
// of spmv_merge: the R row ends and the NNZ nonzeros form one merged sequence, each block takes an
// equal tile of BLOCK * ITEMS items of it, finds the tile's (row, nonzero) corners by a warp-wide
// search, stages the tile's row ends and products in shared memory, walks ITEMS items a thread
// and completes the rows that end inside the tile by a segmented scan of the threads' carry-outs.
// What differs is how a row that crosses tiles gets its earlier part: no block walks the carries
// of all others at the end; each tile reads the few it needs from its predecessors as soon as they
// are published.
//   0. Tiles go by ticket, not by blockIdx: thread 0 takes the next value of a counter, and that is
//      the block's tile. A block waits only on tiles of smaller tickets, whose blocks took their
//      ticket earlier and so have started (and run, or finished): no wait on a block the device has
//      not scheduled, whatever order or residency the hardware gives blocks.
//   4. Each tile publishes its carry-out (the partial sum of the row in progress at its end) as a
//      state word and a value. A tile with a row end in it, or whose first row starts at its start,
//      knows its carry-out's whole prefix at once and publishes it as INCLUSIVE. A tile inside one
//      long row (no row end, the row began earlier) publishes its own sum as AGGREGATE, looks back
//      for the row's earlier part, then publishes that plus its sum as INCLUSIVE.
//   5. A tile whose first row began in an earlier tile looks back with warp 0: 32 predecessors'
//      states at a time, nearest first, until the nearest INCLUSIVE one, q, with every tile between
//      at least AGGREGATE (it spins on one that has published nothing yet). The row's earlier part
//      is then inclusive(q) + aggregate(q + 1) + ... + aggregate(tile - 1), added in this order,
//      left to right. Every inclusive value is that same left-to-right sum from the tile where the
//      row began, so the result has the same bits wherever the look-back stopped: the same bits on
//      every run, however the blocks raced. The first thread to end that row adds it to its part.
// The states live in scratch buffers, which the evaluator poisons before every run; the first
// launch, spmv_lookback_reset, sets every state to "nothing published" and the ticket counter to
// zero, so a run relies on nothing a previous one left and the task's workspaces (carry_row,
// carry_val, counter) are not used: they stay at zero.
// ITEMS odd keeps the threads' strided reads of the staged tile free of bank conflicts.
// @param BLOCK in [64, 128, 256, 512] default 512
// @param ITEMS in [3, 5, 7, 9, 11, 13, 15, 19, 23] default 19
// @param MINB in [1, 2, 3, 4] default 1
// @constraint BLOCK * MINB <= 2048
// @constraint BLOCK <= max_work_group_size
// @constraint 4 * BLOCK * ITEMS + 512 <= min(local_mem_bytes, 49152)
// @scratch tile_state i32 ceil_div(R + NNZ, BLOCK * ITEMS)
// @scratch tile_agg f32 ceil_div(R + NNZ, BLOCK * ITEMS)
// @scratch tile_inc f32 ceil_div(R + NNZ, BLOCK * ITEMS)
// @scratch ticket i32 1

#define TILE (BLOCK * ITEMS)
#define NW (BLOCK / 32)
#define FULL 0xffffffffu

// A tile's state: nothing published yet, its own carry-out sum, or the carry-out row's whole sum
// up to and including this tile.
#define ST_NONE 0
#define ST_AGGREGATE 1
#define ST_INCLUSIVE 2

// @kernel spmv_lookback_reset
// @grid ceil_div(ceil_div(R + NNZ, BLOCK * ITEMS), BLOCK)
// @block BLOCK
extern "C" __global__ void spmv_lookback_reset(const int* row_ptr, const int* col_idx,
                                               const float* vals, const float* x, float* y,
                                               int* carry_row, float* carry_val, int* counter,
                                               int R, int C, int NNZ, int* tile_state,
                                               float* tile_agg, float* tile_inc, int* ticket) {
  const long long tiles = ((long long)R + NNZ + TILE - 1) / TILE;
  const long long k = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (k < tiles) tile_state[k] = ST_NONE;
  if (k == 0) *ticket = 0;
}

// The merge-path coordinate at diagonal d: the number of row ends among the first d items.
// Called by a whole warp; every lane returns the same value.
__device__ __forceinline__ int WarpPathSearch(const int* __restrict__ row_ptr, long long d, int R,
                                              int NNZ) {
  const int lane = threadIdx.x & 31;
  int lo = (int)max(d - NNZ, 0LL), hi = (int)min(d, (long long)R);
  while (lo < hi) {
    const int step = (hi - lo + 31) >> 5;
    const int p = lo + lane * step;
    // True from the answer on: row p's end comes after the d items.
    const bool pred = p >= hi || (long long)__ldg(row_ptr + p + 1) > d - p - 1;
    const unsigned b = __ballot_sync(FULL, pred);
    if (b == 0) {
      lo = lo + 31 * step + 1;
    } else {
      const int f = __ffs(b) - 1;
      const int nlo = f == 0 ? lo : lo + (f - 1) * step + 1;
      hi = min(lo + f * step, hi);
      lo = nlo;
    }
  }
  return lo;
}

// Inclusive segmented scan of (row, v) over a warp's lanes: v summed over the lanes up to this
// one that share its row (rows never decrease with the lane).
__device__ __forceinline__ float WarpSegScan(int row, float v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const float u = __shfl_up_sync(FULL, v, off);
    const int ru = __shfl_up_sync(FULL, row, off);
    if (lane >= off && ru == row) v = u + v;
  }
  return v;
}

// Value first, then (after a fence) the state that says it is there.
__device__ __forceinline__ void Publish(int* tile_state, float* slot, int tile, float v, int st) {
  *(volatile float*)(slot + tile) = v;
  __threadfence();
  *(volatile int*)(tile_state + tile) = st;
}

// Step 5, by a whole warp: the carry-out sum of the tiles before `tile`, which all lie in the row
// the tile starts in. Every lane returns the same value.
__device__ float WarpLookBack(const int* tile_state, const float* tile_agg, const float* tile_inc,
                              int tile) {
  const volatile int* state = tile_state;
  const volatile float* agg = tile_agg;
  const volatile float* inc = tile_inc;
  const int lane = threadIdx.x & 31;
  int hi = tile;  // tiles [hi, tile) have published at least their aggregates
  int q;
  for (;;) {
    const int k = hi - 1 - lane;  // lane 0 the nearest
    // The row's first tile is INCLUSIVE, so the search never passes tile 0; lanes beyond it
    // read nothing.
    const int s = k >= 0 ? state[k] : ST_INCLUSIVE;
    const unsigned incl = __ballot_sync(FULL, s == ST_INCLUSIVE);
    const unsigned none = __ballot_sync(FULL, s == ST_NONE);
    const unsigned nearer = incl ? (incl & (0u - incl)) - 1u : FULL;  // lanes before the first
    const unsigned waiting = none & nearer;
    if (waiting == 0) {
      if (incl) {
        q = hi - __ffs(incl);
        break;
      }
      hi -= 32;
    } else {
      hi -= __ffs(waiting) - 1;  // keep the aggregates before the first unpublished tile
      __nanosleep(32);
    }
  }
  __threadfence();  // the states read above before the values below
  float acc = inc[q];
  for (int base = q + 1; base < tile; base += 32) {
    const float a = base + lane < tile ? agg[base + lane] : 0.0f;
    const int n = min(32, tile - base);
    for (int l = 0; l < n; ++l) acc += __shfl_sync(FULL, a, l);
  }
  return acc;
}

// @kernel spmv_lookback
// @grid ceil_div(R + NNZ, BLOCK * ITEMS)
// @block BLOCK
extern "C" __global__ void __launch_bounds__(BLOCK, MINB)
    spmv_lookback(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                  const float* __restrict__ vals, const float* __restrict__ x, float* y,
                  int* carry_row, float* carry_val, int* counter, int R, int C, int NNZ,
                  int* tile_state, float* tile_agg, float* tile_inc, int* ticket) {
  __shared__ int buf[TILE];  // the tile's row ends, then its products (as bits)
  __shared__ int s_wrow[NW];
  __shared__ float s_wval[NW];
  __shared__ int s_tile, s_coord[2], s_first_start;
  __shared__ float s_prefix;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;

  // 0. The tile, by ticket.
  if (t == 0) s_tile = atomicAdd(ticket, 1);
  __syncthreads();
  const int tile = s_tile;

  // 1. The tile on the merge path: rows [r0, r1) end in it, nonzeros [j0, j1) are in it.
  const long long total = (long long)R + NNZ;
  const long long d0 = (long long)tile * TILE, d1 = min(d0 + TILE, total);
  if (warp < 2) {
    const int c = WarpPathSearch(row_ptr, warp == 0 ? d0 : d1, R, NNZ);
    if (lane == 0) {
      s_coord[warp] = c;
      if (warp == 0) s_first_start = __ldg(row_ptr + c);  // c < R: the tile holds an item of c
    }
  }
  __syncthreads();
  const int r0 = s_coord[0], r1 = s_coord[1];
  const int j0 = (int)(d0 - r0), j1 = (int)(d1 - r1);
  const int nrows = r1 - r0, nnz = j1 - j0, items = nrows + nnz;
  const bool continued = j0 > s_first_start;  // row r0 has nonzeros in earlier tiles
  const bool inside = nrows == 0;             // no row ends here: the tile is all row r0's

  // 2. Stage, then walk this thread's share.
  for (int q = t; q < nrows; q += BLOCK) buf[q] = __ldg(row_ptr + r0 + 1 + q);
  for (int q = t; q < nnz; q += BLOCK)
    buf[nrows + q] = __float_as_int(__ldg(vals + j0 + q) * __ldg(x + __ldg(col_idx + j0 + q)));
  __syncthreads();

  const int diag = min(t * ITEMS, items);
  int lo = max(diag - nnz, 0), hi = min(diag, nrows);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (buf[mid] > j0 + diag - mid - 1)
      hi = mid;
    else
      lo = mid + 1;
  }
  int i = lo, j = diag - lo;
  const int n = min(ITEMS, items - diag);
  float sum = 0.0f, first_sum = 0.0f;
  int first = -1;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    if (k < n) {
      if (i < nrows && (j >= nnz || buf[i] <= j0 + j)) {  // row r0 + i ends here
        if (first < 0) {
          first = i;
          first_sum = sum;
        } else {
          y[r0 + i] = sum;
        }
        sum = 0.0f;
        ++i;
      } else {
        sum += __int_as_float(buf[nrows + j]);
        ++j;
      }
    }
  }

  // 3. Segmented scan of the carry-outs (row r0 + i, sum); rows never decrease with t.
  const int crow = r0 + i;
  float v = WarpSegScan(crow, sum);
  if (lane == 31) {
    s_wrow[warp] = crow;
    s_wval[warp] = v;
  }
  __syncthreads();
  if (warp == 0) {  // scan the warps' totals
    const int wr = lane < NW ? s_wrow[lane] : -1;
    const float wv = WarpSegScan(wr, lane < NW ? s_wval[lane] : 0.0f);
    if (lane < NW) s_wval[lane] = wv;
  }
  __syncthreads();
  if (warp > 0 && s_wrow[warp - 1] == crow) v = s_wval[warp - 1] + v;
  // The inclusive value of the thread before this one.
  float pv = __shfl_up_sync(FULL, v, 1);
  int pr = __shfl_up_sync(FULL, crow, 1);
  if (lane == 0) {
    pr = warp > 0 ? s_wrow[warp - 1] : -1;
    pv = warp > 0 ? s_wval[warp - 1] : 0.0f;
  }
  float fv = first_sum;  // this thread's part of its first row, from the tile's start
  if (first >= 0 && pr == r0 + first) fv = pv + fv;

  // 4. Publish the tile's carry-out; write the rows that need nothing from earlier tiles.
  const float out = s_wval[NW - 1];
  if (t == 0) {
    if (inside && continued)
      Publish(tile_state, tile_agg, tile, out, ST_AGGREGATE);
    else
      Publish(tile_state, tile_inc, tile, out, ST_INCLUSIVE);
  }
  if (first > 0 || (first == 0 && !continued)) y[r0 + first] = fv;

  // 5. Look back for row r0's earlier part.
  if (continued) {  // the same for the whole block
    if (warp == 0) {
      const float prefix = WarpLookBack(tile_state, tile_agg, tile_inc, tile);
      if (lane == 0) {
        s_prefix = prefix;
        if (inside) Publish(tile_state, tile_inc, tile, prefix + out, ST_INCLUSIVE);
      }
    }
    __syncthreads();
    if (first == 0) y[r0] = s_prefix + fv;
  }
}
