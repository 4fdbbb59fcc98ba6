// Starting kernel (kfoundry import, op class elementwise): out = f(x) with 16-byte loads and
// stores (4 floats), UNROLL of them in flight per thread, in a grid-stride loop over the vectors.
// The elements before x's first 16-byte boundary and after its last whole vector are done one by
// one; where x and out are not aligned alike (or their types differ in size) every element is.
// f is computed in fp32.
// @kernel kf_elementwise_vec
// @grid min(ceil_div(KF_ELEMENTS, BLOCK * 4 * UNROLL), 65536)
// @block BLOCK
// @param BLOCK in [128, 256, 512, 1024] default 256
// @param UNROLL in [1, 2, 4] default 2
// @constraint BLOCK <= max_work_group_size
#include <cuda_fp16.h>

#define OP(v) (KF_EXPR)

// 16 bytes of T, loaded and stored as one uint4 (ld/st.global.v4).
template <typename T>
struct __align__(16) Pack {
  T e[16 / sizeof(T)];
};

template <typename T>
__device__ __forceinline__ Pack<T> LoadPack(const T* p) {
  const uint4 bits = *reinterpret_cast<const uint4*>(p);
  return *reinterpret_cast<const Pack<T>*>(&bits);
}

template <typename T>
__device__ __forceinline__ void StorePack(T* p, const Pack<T>& v) {
  uint4 bits;
  memcpy(&bits, &v, 16);
  *reinterpret_cast<uint4*>(p) = bits;
}

template <typename T, typename U>
__device__ __forceinline__ void ElementwiseVec(const T* __restrict__ x, U* __restrict__ y,
                                               long long n) {
  constexpr int kPer = 16 / (sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
  const unsigned long long ax = (unsigned long long)x, ay = (unsigned long long)y;
  // [0, head) one by one, then nvec vectors, then [tail, n) one by one.
  long long head = (long long)((16 - ax % 16) % 16) / sizeof(T);
  if (sizeof(T) != sizeof(U) || ax % 16 != ay % 16 || ax % sizeof(T) != 0 || head > n) head = n;
  const long long nvec = (n - head) / kPer, tail = head + nvec * kPer;
  const long long gid = (long long)blockIdx.x * BLOCK + threadIdx.x;
  const long long threads = (long long)gridDim.x * BLOCK;
  const T* xv = x + head;
  U* yv = y + head;
  for (long long c = gid; c < nvec; c += threads * UNROLL) {
    Pack<T> in[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (c + u * threads < nvec) in[u] = LoadPack(xv + (c + u * threads) * kPer);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      if (c + u * threads >= nvec) break;
      Pack<U> out;
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const float v = static_cast<float>(in[u].e[k]);
        out.e[k] = static_cast<U>(OP(v));
      }
      StorePack(yv + (c + u * threads) * kPer, out);
    }
  }
  for (long long k = gid; k < head + (n - tail); k += threads) {
    const long long i = k < head ? k : tail + (k - head);
    const float v = static_cast<float>(x[i]);
    y[i] = static_cast<U>(OP(v));
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) kf_elementwise_vec(KF_PARAMS) {
  ElementwiseVec(KF_X, KF_OUT, KF_ELEMENTS);
}
