// Merge-path CSR with a decoupled look-back across work-groups, deterministic. Steps 1 to 3 are
// those of spmv_merge.cl: the R row ends and the NNZ nonzeros form one merged sequence, each
// group takes an equal tile of BLOCK * ITEMS items of it, finds the tile's (row, nonzero) corners
// by binary search, stages the tile's row ends and products in local memory, walks ITEMS items a
// work-item and completes the rows that end inside the tile by a segmented scan of the
// work-items' carry-outs. What differs is how a row that crosses tiles gets its earlier part: no
// group walks the carries of all others at the end; each tile reads the few it needs from its
// predecessors as soon as they are published.
//   0. Tiles go by ticket, not by group id: work-item 0 takes the next value of a counter, and that
//      is the group's tile. A group waits only on tiles of smaller tickets, whose groups took their
//      ticket earlier and so have started (and run, or finished): no wait on a group the device has
//      not scheduled, in whatever order it runs groups (PoCL runs each to its end on one thread).
//   4. Each tile publishes its carry-out (the partial sum of the row in progress at its end) as a
//      state word and a value. A tile with a row end in it, or whose first row starts at its start,
//      knows its carry-out's whole prefix at once and publishes it as INCLUSIVE. A tile inside one
//      long row (no row end, the row began earlier) publishes its own sum as AGGREGATE, looks back
//      for the row's earlier part, then publishes that plus its sum as INCLUSIVE.
//   5. A tile whose first row began in an earlier tile looks back (work-item 0, one predecessor at
//      a time, nearest first, waiting on one that has published nothing yet) to the nearest
//      INCLUSIVE tile q. The row's earlier part is then inclusive(q) + aggregate(q + 1) + ... +
//      aggregate(tile - 1), added in this order, left to right. Every inclusive value is that same
//      left-to-right sum from the tile where the row began, so the result has the same bits
//      wherever the look-back stopped: the same bits on every run, however the groups raced. The
//      first work-item to end that row adds it to its part.
// States are published with atomic_xchg after a global fence over the value, and read through
// volatile pointers with a fence between the state and the value.
// The states live in scratch buffers, which the evaluator poisons before every run; the first
// launch, spmv_lookback_reset, sets every state to "nothing published" and the ticket counter to
// zero, so a run relies on nothing a previous one left and the task's workspaces (carry_row,
// carry_val, counter) are not used: they stay at zero.
// @param BLOCK in [32, 64, 128, 256] default 64
// @param ITEMS in [2, 4, 8, 16, 32] default 8
// @constraint BLOCK <= max_work_group_size
// @constraint 4 * (BLOCK * ITEMS + 2 * BLOCK + 5) <= local_mem_bytes
// @scratch tile_state i32 ceil_div(R + NNZ, BLOCK * ITEMS)
// @scratch tile_agg f32 ceil_div(R + NNZ, BLOCK * ITEMS)
// @scratch tile_inc f32 ceil_div(R + NNZ, BLOCK * ITEMS)
// @scratch ticket i32 1

#define TILE (BLOCK * ITEMS)

// A tile's state: nothing published yet, its own carry-out sum, or the carry-out row's whole sum
// up to and including this tile.
#define ST_NONE 0
#define ST_AGGREGATE 1
#define ST_INCLUSIVE 2

// @kernel spmv_lookback_reset
// @grid ceil_div(ceil_div(R + NNZ, BLOCK * ITEMS), BLOCK)
// @block BLOCK
__kernel void spmv_lookback_reset(__global const int* row_ptr, __global const int* col_idx,
                                  __global const float* vals, __global const float* x,
                                  __global float* y, __global int* carry_row,
                                  __global float* carry_val, __global int* counter, int R, int C,
                                  int NNZ, __global int* tile_state, __global float* tile_agg,
                                  __global float* tile_inc, __global int* ticket) {
  const long tiles = ((long)R + NNZ + TILE - 1) / TILE;
  const long k = get_global_id(0);
  if (k < tiles) tile_state[k] = ST_NONE;
  if (k == 0) ticket[0] = 0;
}

// The merge-path coordinate at diagonal d: the number of row ends among the first d items
// (a binary search by one work-item).
int PathSearch(__global const int* row_ptr, long d, int R, int NNZ) {
  int lo = (int)max(d - NNZ, 0L), hi = (int)min(d, (long)R);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if ((long)row_ptr[mid + 1] > d - mid - 1)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// Value first, then (after a fence) the state that says it is there.
void Publish(__global volatile int* tile_state, __global volatile float* slot, int tile, float v,
             int st) {
  slot[tile] = v;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  atomic_xchg(tile_state + tile, st);
}

// Step 5: the carry-out sum of the tiles before `tile`, which all lie in the row the tile starts
// in. The row's first tile is INCLUSIVE, so the walk never passes tile 0.
float LookBack(__global volatile int* tile_state, __global volatile float* tile_agg,
               __global volatile float* tile_inc, int tile) {
  int q = tile - 1;
  for (;;) {
    const int s = tile_state[q];
    if (s == ST_INCLUSIVE) break;
    if (s == ST_AGGREGATE) --q;  // else: nothing published yet, read it again
  }
  mem_fence(CLK_GLOBAL_MEM_FENCE);  // the states read above before the values below
  float acc = tile_inc[q];
  for (int k = q + 1; k < tile; ++k) acc += tile_agg[k];
  return acc;
}

// @kernel spmv_lookback
// @grid ceil_div(R + NNZ, BLOCK * ITEMS)
// @block BLOCK
__kernel void spmv_lookback(__global const int* restrict row_ptr,
                            __global const int* restrict col_idx,
                            __global const float* restrict vals, __global const float* restrict x,
                            __global float* y, __global int* carry_row, __global float* carry_val,
                            __global int* counter, int R, int C, int NNZ, __global int* tile_state,
                            __global float* tile_agg, __global float* tile_inc,
                            __global int* ticket) {
  __local int buf[TILE];  // the tile's row ends, then its products (as bits)
  __local int s_row[BLOCK];
  __local float s_val[BLOCK];
  __local int s_misc[4];  // the tile, its first and last row, where its first row starts
  __local float s_prefix;
  const int t = get_local_id(0);

  // 0. The tile, by ticket.
  if (t == 0) s_misc[0] = atomic_inc(ticket);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int tile = s_misc[0];

  // 1. The tile on the merge path: rows [r0, r1) end in it, nonzeros [j0, j1) are in it.
  const long total = (long)R + NNZ;
  const long d0 = (long)tile * TILE, d1 = min(d0 + TILE, total);
  if (t < 2) {
    const int c = PathSearch(row_ptr, t == 0 ? d0 : d1, R, NNZ);
    s_misc[1 + t] = c;
    if (t == 0) s_misc[3] = row_ptr[c];  // c < R: the tile holds an item of row c
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int r0 = s_misc[1], r1 = s_misc[2];
  const int j0 = (int)(d0 - r0), j1 = (int)(d1 - r1);
  const int nrows = r1 - r0, nnz = j1 - j0, items = nrows + nnz;
  const bool continued = j0 > s_misc[3];  // row r0 has nonzeros in earlier tiles
  const bool inside = nrows == 0;         // no row ends here: the tile is all row r0's

  // 2. Stage, then walk this work-item's share.
  for (int q = t; q < nrows; q += BLOCK) buf[q] = row_ptr[r0 + 1 + q];
  for (int q = t; q < nnz; q += BLOCK) buf[nrows + q] = as_int(vals[j0 + q] * x[col_idx[j0 + q]]);
  barrier(CLK_LOCAL_MEM_FENCE);

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
  for (int k = 0; k < n; ++k) {
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
      sum += as_float(buf[nrows + j]);
      ++j;
    }
  }

  // 3. Segmented inclusive scan of the carry-outs (row r0 + i, sum); rows never decrease with t.
  const int crow = r0 + i;
  s_row[t] = crow;
  s_val[t] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = 1; off < BLOCK; off <<= 1) {
    float v = s_val[t];
    if (t >= off && s_row[t - off] == crow) v = s_val[t - off] + v;
    barrier(CLK_LOCAL_MEM_FENCE);
    s_val[t] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float fv = first_sum;  // this work-item's part of its first row, from the tile's start
  if (first >= 0 && t > 0 && s_row[t - 1] == r0 + first) fv = s_val[t - 1] + fv;

  // 4. Publish the tile's carry-out; write the rows that need nothing from earlier tiles.
  const float out = s_val[BLOCK - 1];
  if (t == 0) {
    if (inside && continued)
      Publish(tile_state, tile_agg, tile, out, ST_AGGREGATE);
    else
      Publish(tile_state, tile_inc, tile, out, ST_INCLUSIVE);
  }
  if (first > 0 || (first == 0 && !continued)) y[r0 + first] = fv;

  // 5. Look back for row r0's earlier part.
  if (t == 0 && continued) {
    const float prefix = LookBack(tile_state, tile_agg, tile_inc, tile);
    s_prefix = prefix;
    if (inside) Publish(tile_state, tile_inc, tile, prefix + out, ST_INCLUSIVE);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (continued && first == 0) y[r0] = s_prefix + fv;
}
