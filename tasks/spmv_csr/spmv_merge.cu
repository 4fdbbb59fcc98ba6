// Merge-path CSR (Merrill & Garland, SC 2016), deterministic. The R row ends and the NNZ nonzeros
// form one merged sequence of R + NNZ items (row r's end comes after its last nonzero); each
// block takes an equal tile of BLOCK * ITEMS items, whatever the row lengths, so a row of tens of
// thousands of nonzeros is shared by many blocks and many short rows go to one.
//   1. Warps 0 and 1 find where the block's tile starts and ends on the merge path,
//      (row, nonzero), by a 32-ary search in row_ptr (each round every lane tests one point and a
//      ballot picks the interval): about 5 dependent loads for 4 M rows instead of 22.
//   2. The block stages its tile's row ends and products vals[k] * x[col_idx[k]] in shared memory
//      (coalesced), then each thread binary-searches its own ITEMS-item share of the tile and
//      walks it, writing y for every row it finishes, except its first, whose earlier part
//      belongs to the threads before it.
//   3. The threads' carry-outs (the row in progress at the end of their share and its partial
//      sum) are combined by a segmented scan (warp shuffles, then across the warps' totals),
//      which completes each thread's first row and gives the block's carry-out.
//   4. Each block stores its carry-out in the workspace and takes a ticket; the block with the
//      last ticket adds, for each row that crossed block boundaries, its carries in block order
//      to y, then leaves the workspace at zero. Every sum has a fixed order: same bits each run.
// ITEMS odd keeps the threads' strided reads of the staged tile free of bank conflicts. Small tiles
// make many blocks, each with its search, its ticket and a carry for the last block's fix-up to
// walk. Measured on an H200 at the size of record (median of 20 launches): BLOCK 512 x ITEMS 19
// 0.60 ms, 512 x 13 0.63, 512 x 9 0.68, 256 x 11 0.83, 256 x 7 1.14, 64 x 3 9.9 ms; MINB changed
// little. cuSPARSE's CSR SpMV took 0.51 ms on the same matrix, the vector template 1.27 ms, the
// baseline 2.46 ms.
// @kernel spmv_merge
// @grid ceil_div(R + NNZ, BLOCK * ITEMS)
// @block BLOCK
// @param BLOCK in [64, 128, 256, 512] default 512
// @param ITEMS in [3, 5, 7, 9, 11, 13, 15, 19, 23] default 19
// @param MINB in [1, 2, 3, 4] default 1
// @constraint BLOCK * MINB <= 2048
// @constraint BLOCK * ITEMS >= 128 and BLOCK <= max_work_group_size
// @constraint 4 * BLOCK * ITEMS + 512 <= min(local_mem_bytes, 49152)

#define TILE (BLOCK * ITEMS)
#define NW (BLOCK / 32)

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
    const unsigned b = __ballot_sync(0xffffffffu, pred);
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
    const float u = __shfl_up_sync(0xffffffffu, v, off);
    const int ru = __shfl_up_sync(0xffffffffu, row, off);
    if (lane >= off && ru == row) v = u + v;
  }
  return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK, MINB)
    spmv_merge(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
               const float* __restrict__ vals, const float* __restrict__ x, float* y,
               int* carry_row, float* carry_val, int* counter, int R, int C, int NNZ) {
  __shared__ int buf[TILE];  // the tile's row ends, then its products (as bits)
  __shared__ int s_wrow[NW];
  __shared__ float s_wval[NW];
  __shared__ int s_coord[2];
  __shared__ int s_last;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;

  // 1. The tile on the merge path: rows [r0, r1) end in it, nonzeros [j0, j1) are in it.
  const long long total = (long long)R + NNZ;
  const long long d0 = (long long)blockIdx.x * TILE, d1 = min(d0 + TILE, total);
  if (warp < 2) {
    const int c = WarpPathSearch(row_ptr, warp == 0 ? d0 : d1, R, NNZ);
    if (lane == 0) s_coord[warp] = c;
  }
  __syncthreads();
  const int r0 = s_coord[0], r1 = s_coord[1];
  const int j0 = (int)(d0 - r0), j1 = (int)(d1 - r1);
  const int nrows = r1 - r0, nnz = j1 - j0, items = nrows + nnz;

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
  float pv = __shfl_up_sync(0xffffffffu, v, 1);
  int pr = __shfl_up_sync(0xffffffffu, crow, 1);
  if (lane == 0) {
    pr = warp > 0 ? s_wrow[warp - 1] : -1;
    pv = warp > 0 ? s_wval[warp - 1] : 0.0f;
  }
  if (first >= 0) {
    float fv = first_sum;
    if (pr == r0 + first) fv = pv + fv;
    y[r0 + first] = fv;
  }

  // 4. Carry-out, ticket, and the last block's fix-up.
  if (t == 0) {
    carry_row[blockIdx.x] = s_wrow[NW - 1];
    carry_val[blockIdx.x] = s_wval[NW - 1];
  }
  __threadfence();
  __syncthreads();
  if (t == 0) s_last = atomicAdd(counter, 1) == (int)gridDim.x - 1;
  __syncthreads();
  if (!s_last) return;
  __threadfence();
  // One thread per carry: the thread at the first carry of a row (its predecessor's row differs)
  // sums that row's run of carries in block order and adds it to y. The loads of a carry, its
  // neighbours and (once the row is known) y are issued together; most runs have length 1.
  const int blocks = gridDim.x;
  for (int c = t; c < blocks; c += BLOCK) {
    const int row = __ldcg(carry_row + c);
    const int prev = c > 0 ? __ldcg(carry_row + c - 1) : -1;
    const int next = c + 1 < blocks ? __ldcg(carry_row + c + 1) : -1;
    float s = __ldcg(carry_val + c);
    if (row < R && prev != row) {
      const float yr = __ldcg(y + row);
      if (next == row)
        for (int q = c + 1; q < blocks && __ldcg(carry_row + q) == row; ++q)
          s += __ldcg(carry_val + q);
      y[row] = yr + s;
    }
  }
  __syncthreads();
  for (int c = t; c < blocks; c += BLOCK) {
    carry_row[c] = 0;
    carry_val[c] = 0.0f;
  }
  if (t == 0) *counter = 0;
}
