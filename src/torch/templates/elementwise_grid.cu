// Starting kernel (kfoundry import, op class elementwise): out = f(x) element by element in a
// grid-stride loop; each step a thread takes ITEMS elements BLOCK apart (all loads first, then
// all stores), so a warp's accesses are contiguous and ITEMS loads are in flight per thread. The
// grid is capped; a grid-stride loop covers what is past it. f is computed in fp32.
// @kernel kf_elementwise_grid
// @grid min(ceil_div(KF_ELEMENTS, BLOCK * ITEMS), 65536)
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 256
// @param ITEMS in [1, 2, 4, 8] default 4
// @constraint BLOCK <= max_work_group_size
#include <cuda_fp16.h>

#define OP(v) (KF_EXPR)

template <typename T, typename U>
__device__ __forceinline__ void ElementwiseGrid(const T* __restrict__ x, U* __restrict__ y,
                                                long long n) {
  const long long step = (long long)gridDim.x * BLOCK * ITEMS;
  for (long long first = (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x; first < n;
       first += step) {
    float in[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const long long i = first + (long long)k * BLOCK;
      in[k] = i < n ? static_cast<float>(x[i]) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const long long i = first + (long long)k * BLOCK;
      const float v = in[k];
      if (i < n) y[i] = static_cast<U>(OP(v));
    }
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_elementwise_grid(KF_PARAMS) {
  ElementwiseGrid(KF_X, KF_OUT, KF_ELEMENTS);
}
