// Merge-path CSR (Merrill & Garland, SC 2016), deterministic. The R row ends and the NNZ nonzeros
// form one merged sequence of R + NNZ items (row r's end comes after its last nonzero); each
// work-group takes an equal tile of BLOCK * ITEMS items, whatever the row lengths, so a row of
// tens of thousands of nonzeros is shared by many groups and many short rows go to one.
//   1. Work-items 0 and 1 find where the group's tile starts and ends on the merge path,
//      (row, nonzero), by a binary search in row_ptr. (A BLOCK-ary search by the whole group, a
//      loop of barriers, made PoCL's first-launch compile take over the evaluator's 2 s launch
//      deadline on a loaded 2-core machine.)
//   2. It stages its tile's row ends and products vals[k] * x[col_idx[k]] in local memory
//      (consecutive work-items read consecutive nonzeros), then each work-item binary-searches
//      its own ITEMS-item share of the tile and walks it, writing y for every row it finishes,
//      except its first, whose earlier part belongs to the work-items before it.
//   3. The work-items' carry-outs (the row in progress at the end of their share, and its partial
//      sum) are combined by a segmented scan in local memory, which completes each work-item's
//      first row and gives the group's carry-out.
//   4. Each group stores its carry-out in the workspace and takes a ticket; the group with the
//      last ticket adds, for each row that crossed group boundaries, its carries in group order
//      to y, then leaves the workspace at zero. Every sum has a fixed order: same bits each run.
// @kernel spmv_merge
// @grid ceil_div(R + NNZ, BLOCK * ITEMS)
// @block BLOCK
// @param BLOCK in [32, 64, 128, 256] default 64
// @param ITEMS in [2, 4, 8, 16, 32] default 8
// @constraint BLOCK * ITEMS >= 128 and BLOCK <= max_work_group_size
// @constraint 4 * (BLOCK * ITEMS + 2 * BLOCK + 4) <= local_mem_bytes

#define TILE (BLOCK * ITEMS)

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

__kernel void spmv_merge(__global const int* restrict row_ptr, __global const int* restrict col_idx,
                         __global const float* restrict vals, __global const float* restrict x,
                         __global float* y, __global int* carry_row, __global float* carry_val,
                         __global int* counter, int R, int C, int NNZ) {
  __local int buf[TILE];  // the tile's row ends, then its products (as bits)
  __local int s_row[BLOCK];
  __local float s_val[BLOCK];
  __local int s_misc[3];  // the tile's first and last row, and "this group is the last"
  const int t = get_local_id(0);
  const int g = get_group_id(0), groups = get_num_groups(0);

  // 1. The tile on the merge path: rows [r0, r1) end in it, nonzeros [j0, j1) are in it.
  const long total = (long)R + NNZ;
  const long d0 = (long)g * TILE, d1 = min(d0 + TILE, total);
  if (t < 2) s_misc[t] = PathSearch(row_ptr, t == 0 ? d0 : d1, R, NNZ);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int r0 = s_misc[0], r1 = s_misc[1];
  const int j0 = (int)(d0 - r0), j1 = (int)(d1 - r1);
  const int nrows = r1 - r0, nnz = j1 - j0, items = nrows + nnz;

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
  if (first >= 0) {
    float v = first_sum;
    if (t > 0 && s_row[t - 1] == r0 + first) v = s_val[t - 1] + v;
    y[r0 + first] = v;
  }

  // 4. Carry-out, ticket, and the last group's fix-up.
  if (t == 0) {
    carry_row[g] = s_row[BLOCK - 1];
    carry_val[g] = s_val[BLOCK - 1];
  }
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  if (t == 0) s_misc[2] = atomic_inc(counter) == groups - 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!s_misc[2]) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  __global volatile int* vrow = carry_row;
  __global volatile float* vval = carry_val;
  __global volatile float* vy = y;
  // One work-item per carry: the one at the first carry of a row (its predecessor's row differs)
  // sums that row's run of carries in group order and adds it to y; most runs have length 1.
  for (int c = t; c < groups; c += BLOCK) {
    const int row = vrow[c];
    const int prev = c > 0 ? vrow[c - 1] : -1;
    const int next = c + 1 < groups ? vrow[c + 1] : -1;
    float s = vval[c];
    if (row < R && prev != row) {
      if (next == row)
        for (int q = c + 1; q < groups && vrow[q] == row; ++q) s += vval[q];
      vy[row] = vy[row] + s;
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (int c = t; c < groups; c += BLOCK) {
    carry_row[c] = 0;
    carry_val[c] = 0.0f;
  }
  if (t == 0) counter[0] = 0;
}
