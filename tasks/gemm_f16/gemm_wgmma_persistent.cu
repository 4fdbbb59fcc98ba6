// A persistent, warp-specialised Hopper GEMM (fp16, or bf16 under KF_BF16): a fixed number of
// blocks (CTAS, one per SM: a block's 384 threads hold nearly all of an SM's 64K registers) walk
// the tiles of C in a static schedule, tile t, t + gridDim.x, ..., each block keeping its
// producer and its consumers busy across tile boundaries: the producer fills the ring with the
// next tile's first K steps while the consumers still store the last tile's C.
//
// Roles. A block is three warpgroups (384 threads). Warpgroup 0 is the producer: it copies the
// A and B tiles of one K step (BK = 64) into a stage of a STAGES-deep ring in dynamic shared
// memory and gives its registers up (setmaxnreg.dec 40). Warpgroups 1 and 2 are the consumers
// (setmaxnreg.inc 232); each owns half of the BM x BN tile of C (BM/2 rows, as BM/128 wgmma tiles
// of 64 x BN), multiplies it on wgmma.mma_async.m64nBNk16 (fp16 in, fp32 accumulators, both
// operands read from shared memory through matrix descriptors), keeps it in fp32 registers over
// the whole K loop, then rounds it to fp16 once and stores it from registers, guarded at the
// matrix edges.
//
// Schedule. Tiles are numbered in groups of GROUP_M tile rows: within a group the index runs down
// M first, then along N, so the blocks that run at one time share a few B column tiles (and
// GROUP_M A row tiles), which then stay in L2. Every role walks the same tile sequence, so the
// producer and the consumers agree on which stage holds which K step without talking about tiles.
//
// The ring. Stage s has two mbarriers in shared memory after the stages. full[s] expects 128
// arrivals, one per producer thread per use of the stage, plus, with COPY 0, the bytes of the
// bulk copies (below) the producer threads announced; its phase completes when all 128 have
// arrived and every announced byte has landed. empty[s] expects 8 arrivals, one per consumer warp,
// made after the warp's wgmma.wait_group says the wgmma that read the stage have finished. Both
// sides count K steps across tiles (`step`); step i uses stage i % STAGES in round i / STAGES, so
// a wait for round r is a wait on the parity r % 2. The producer reuses a stage from round 1 on,
// after the consumers' release of the round before.
//
// Copies into a stage, three ways (every one writes the same layout, below):
//   COPY 0, rows 16-byte aligned (K and N multiples of 8, A and B 16-byte aligned): the TMA
//     engine, through the bulk copy that needs no tensor map (cp.async.bulk.shared::cluster.global
//     .mbarrier::complete_tx::bytes, contiguous bytes, a multiple of 16). Each copy is one 16-byte
//     chunk, not a whole tile row: the swizzle below puts the eight 16-byte chunks of a 128-byte
//     row in a row-dependent order, and a 1-D copy cannot reorder (neither can the unswizzled
//     wgmma layout, whose 8 x 16-byte core matrices split a row into 16-byte pieces too). A
//     producer thread first zero-fills, with plain stores, its chunks that lie outside the
//     matrices and counts the others; fences the stores to the async proxy; arrives on full[s]
//     announcing 16 bytes per counted chunk (mbarrier.arrive.expect_tx); then issues exactly those
//     copies, which complete their bytes on full[s]. The same predicate decides both passes, so
//     the announced bytes are the issued bytes.
//   COPY 1, the same alignment: 16-byte cp.async with zero-fill past the edges, and one arrival
//     per thread on full[s] once its copies have landed (cp.async.mbarrier.arrive.noinc), as in
//     gemm_wgmma_ws.
//   Rows not 16-byte aligned (either COPY): guarded scalar reads, zeros past the edges, stored as
//     16-byte words, fenced to the async proxy, then a plain arrival.
// A consumer waits for full[s], then fences the async proxy (the cp.async and plain stores are
// generic-proxy writes; wgmma reads through the async proxy) before its wgmma.
//
// Consumer K step: wgmma.fence (the accumulators were written by ordinary instructions: zeroed
// at a tile's start), four k16 wgmma per 64-row tile on the stage, one commit_group, then
// wait_group 1: the previous step's group has finished, so that step's stage goes back to the
// producer (empty), while this step's group keeps the tensor cores busy during the next wait. At
// a tile's end wait_group 0, the last stage goes back, and the tile is stored.
//
// Shared memory per stage (each part 1024-byte aligned), in the 128-byte swizzle the descriptors
// name (layout type 1: 16-byte chunk c of a 128-byte row r is stored at chunk c ^ (r % 8); the
// pattern repeats every 8 rows, 1024 bytes, so the descriptors' base offset is 0):
//   A: BM rows of BK = 64 halves (128 bytes), K-major, as wgmma takes A without a transpose.
//      Descriptor at the warpgroup's first row, 8-row groups 1024 bytes apart (stride offset),
//      leading offset unused with this swizzle; a k16 step is +32 bytes within the rows.
//   B: BN/64 blocks of 64 columns; row k of a block is 128 bytes of N-contiguous halves (B is
//      row-major K x N: N-major, imm-trans-b 1). Descriptor: 8-row groups of k 1024 bytes apart
//      (stride offset), the 64-column blocks BK * 128 bytes apart (leading offset); a k16 step is
//      16 rows, +2048 bytes.
// Registers: the accumulator element j of a thread (of a 64 x BN wgmma tile) is at row
// 16 * warp + lane / 4 (+ 8 when j % 4 >= 2), column 8 * (j / 4) + 2 * (lane % 4) + j % 2.
//
// Launch rules cannot read the device (only constraints can), so the number of blocks is the
// parameter CTAS, held to the device's SM count by a constraint: 132 on an H100 SXM or H200,
// 114 on an H100 PCIe. Any count is correct; fewer than the SMs leaves some idle.
// @kernel gemm_wgmma_persistent
// @grid min(CTAS, ceil_div(M, BM) * ceil_div(N, BN))
// @block 384
// @shared STAGES * (BM + BN) * 128 + 2048
// @param BM in [128, 256] default 128
// @param BN in [256, 128, 64] default 256
// @param STAGES in [4, 3, 5, 6] default 4
// @param GROUP_M in [8, 1, 4, 16] default 8
// @param COPY in [0, 1] default 0
// @param CTAS in [132, 114] default 132
// @constraint (BM // 128) * BN <= 256
// @constraint STAGES * (BM + BN) * 128 + 2048 <= local_mem_bytes
// @constraint CTAS <= compute_units
// The element type: fp16, or bf16 under KF_BF16 (the gemm_f16.bf16 variant), with its wgmma
// operand type and its conversions from fp32 (as gemm_wgmma_ws).
#if KF_BF16
#include <cuda_bf16.h>
typedef __nv_bfloat16 elem_t;
typedef __nv_bfloat162 elem2_t;
#define ELEM_PTX "bf16"
__device__ __forceinline__ unsigned short elem_bits(elem_t x) {
  return __bfloat16_as_ushort(x);
}
__device__ __forceinline__ elem_t elem_rn(float x) {
  return __float2bfloat16_rn(x);
}
__device__ __forceinline__ elem2_t elem2_rn(float x, float y) {
  return __floats2bfloat162_rn(x, y);
}
#else
#include <cuda_fp16.h>
typedef __half elem_t;
typedef __half2 elem2_t;
#define ELEM_PTX "f16"
__device__ __forceinline__ unsigned short elem_bits(elem_t x) {
  return __half_as_ushort(x);
}
__device__ __forceinline__ elem_t elem_rn(float x) {
  return __float2half_rn(x);
}
__device__ __forceinline__ elem2_t elem2_rn(float x, float y) {
  return __floats2half2_rn(x, y);
}
#endif

#define BK 64
#define THREADS 384  // the producer warpgroup, then two consumer warpgroups
#define PRODUCERS 128
#define CONSUMER_WARPS 8
#define WG_ROWS (BM / 2)   // rows of C per consumer warpgroup
#define MT (WG_ROWS / 64)  // 64-row wgmma tiles per consumer warpgroup
#define ACC (BN / 2)       // fp32 accumulators per thread per 64-row tile
#define A_STAGE_BYTES (BM * BK * 2)
#define B_STAGE_BYTES (BK * BN * 2)
#define STAGE_BYTES (A_STAGE_BYTES + B_STAGE_BYTES)
#define B_BLOCK_BYTES (BK * 128)  // one 64-column block of B: 64 k rows of 128 bytes
// A producer thread's chunks: A rows are 8 chunks of 16 bytes, a pass of the 128 producers covers
// A_RPP rows; B rows (k) are BN / 8 chunks, a pass covers B_RPP rows (4 at BN = 256: the
// swizzle is computed from each row's own index, so any pass height lands right).
#define A_RPP (PRODUCERS / 8)
#define A_PASSES (BM / A_RPP)
#define B_CPR (BN / 8)
#define B_RPP (PRODUCERS / B_CPR)
#define B_PASSES (BK / B_RPP)

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared through the TMA engine (no tensor map: a contiguous run of bytes);
// on completion the 16 bytes count against the transaction count of the mbarrier `bar`.
__device__ __forceinline__ void bulk_copy16(unsigned dst, const void* src, unsigned bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];\n" ::
          "r"(dst),
      "l"(src), "r"(bar)
      : "memory");
}
// 16 bytes global -> shared, asynchronously; bytes past src_bytes (0 or 16) are zero-filled.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}
// Orders generic-proxy writes to shared memory (plain stores, cp.async) before later async-proxy
// accesses of it (wgmma's operand reads, bulk copies).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void st_shared16(unsigned dst, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}
// wgmma writes the accumulators asynchronously: this empty statement, which "changes" each of
// them, keeps the compiler from moving their reads or writes across the waits and fences around it.
__device__ __forceinline__ void fence_operands(float* d, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// A shared-memory matrix descriptor for the 128-byte swizzle (layout type 1, bits 62-63): start
// address, leading-dimension byte offset and stride-dimension byte offset, each >> 4 in 14 bits.
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the other threads and to the async proxy (the bulk
// copies complete on them).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// One arrival on `bar` that also raises the bytes its current phase waits for by `bytes`.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
// One arrival on `bar` once all of this thread's earlier cp.async have completed.
__device__ __forceinline__ void mbar_arrive_cp_async(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase of `bar` with parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

#if BN == 64
// D[64 x 64] += A[64 x 16] * B[16 x 64], both from shared memory (descriptors); B N-major
// (imm-trans-b = 1). d[] holds this thread's 32 fp32 accumulators.
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(1));
}
#elif BN == 128
// D[64 x 128] += A[64 x 16] * B[16 x 128], both from shared memory (descriptors); B N-major
// (imm-trans-b = 1). d[] holds this thread's 64 fp32 accumulators.
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "l"(da), "l"(db), "r"(1));
}
#elif BN == 256
// D[64 x 256] += A[64 x 16] * B[16 x 256], both from shared memory (descriptors); B N-major
// (imm-trans-b = 1). d[] holds this thread's 128 fp32 accumulators.
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." ELEM_PTX "." ELEM_PTX
      " {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "
      "%127"
      "}, %128, %129, p, 1, 1, 0, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(1));
}

#endif

// Eight halves of a row, zeros past `left` valid elements, as one 16-byte word.
__device__ __forceinline__ uint4 gather8(const elem_t* src, int left) {
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned lo = 2 * i < left ? elem_bits(src[2 * i]) : 0u;
    const unsigned hi = 2 * i + 1 < left ? elem_bits(src[2 * i + 1]) : 0u;
    w[i] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

// Two horizontally adjacent results of row m, columns n and n + 1 (n even).
__device__ __forceinline__ void store2(elem_t* C, int M, int N, bool vec2, int m, int n, float x,
                                       float y) {
  if (m >= M) return;
  elem_t* dst = C + (long long)m * N + n;
  if (vec2) {
    if (n < N) *reinterpret_cast<elem2_t*>(dst) = elem2_rn(x, y);
  } else {
    if (n < N) dst[0] = elem_rn(x);
    if (n + 1 < N) dst[1] = elem_rn(y);
  }
}

// Tile t of the static schedule: its first row and column of C. Tiles run down M in groups of
// GROUP_M tile rows (fewer in the last group), then along N.
__device__ __forceinline__ void tile_origin(int t, int tiles_m, int tiles_n, int* bm, int* bn) {
  const int per_group = GROUP_M * tiles_n;
  const int first_m = t / per_group * GROUP_M;
  const int group_rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = t % per_group;
  *bm = (first_m + in_group % group_rows) * BM;
  *bn = in_group / group_rows * BN;
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_wgmma_persistent(const elem_t* __restrict__ A, const elem_t* __restrict__ B,
                          elem_t* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The swizzle repeats from 1024-byte boundaries: round the base up (@shared has 1 KB to spare).
  const unsigned smem0 = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const unsigned full0 = smem0 + STAGES * STAGE_BYTES;  // full[s] at full0 + 8 s
  const unsigned empty0 = full0 + STAGES * 8;           // empty[s] at empty0 + 8 s
  const int tid = threadIdx.x;
  const int wg = tid >> 7;  // 0: producer; 1, 2: consumers

  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int tiles = tiles_m * tiles_n;
  const int KT = (K + BK - 1) / BK;

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full0 + 8 * s, PRODUCERS);
      mbar_init(empty0 + 8 * s, CONSUMER_WARPS);
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the only block-wide barrier: the roles part here

  if (wg == 0) {
    // Producer. Its thread copies chunk a_c of A rows a_r + A_RPP * p, and chunk b_c (of BN / 8)
    // of B rows b_r + B_RPP * p, which lies in column block b_c / 8. The passes are loops, not
    // unrolled, so that 40 registers hold the producer.
    setmaxnreg_dec<40>();
    const bool vec = (K % 8 == 0) && (N % 8 == 0) && ((size_t)A % 16 == 0) && ((size_t)B % 16 == 0);
    const int a_r = tid / 8, a_c = tid % 8;
    const int b_r = tid / B_CPR, b_c = tid % B_CPR;
    const unsigned a_dst = a_r * 128 + ((a_c ^ (a_r & 7)) << 4);  // + A_RPP * 128 a pass
    const unsigned b_col = A_STAGE_BYTES + (b_c / 8) * B_BLOCK_BYTES;
    int step = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int bm, bn;
      tile_origin(t, tiles_m, tiles_n, &bm, &bn);
      const int b_n = bn + b_c * 8;
      for (int kt = 0; kt < KT; ++kt, ++step) {
        const int s = step % STAGES;
        const unsigned round = step / STAGES;
        // From round 1 on, stage s held step `step - STAGES`: wait until the consumers freed it
        // (the completion of empty[s]'s phase of round - 1).
        if (round > 0) mbar_wait(empty0 + 8 * s, (round - 1) & 1);
        const unsigned stage = smem0 + s * STAGE_BYTES;
        const unsigned full = full0 + 8 * s;
        const int k0 = kt * BK, ka = k0 + a_c * 8;
        // Where this thread's chunk of pass p lies, and whether it lies inside the matrix (with
        // rows 16-byte aligned a chunk is then whole: K and N are multiples of 8).
        auto a_row = [&](int p) { return bm + a_r + p * A_RPP; };
        auto a_dst_of = [&](int p) { return stage + a_dst + p * (A_RPP * 128); };
        auto a_in = [&](int p) { return a_row(p) < M && ka < K; };
        auto b_row = [&](int p) { return b_r + p * B_RPP; };
        auto b_dst_of = [&](int p) {
          const int r = b_row(p);
          return stage + b_col + r * 128 + (((b_c & 7) ^ (r & 7)) << 4);
        };
        auto b_in = [&](int p) { return k0 + b_row(p) < K && b_n < N; };
        if (vec && COPY == 0) {
          // Pass 1: zeros outside the matrices, and the bytes the copies will bring.
          unsigned bytes = 0;
#pragma unroll 1
          for (int p = 0; p < A_PASSES; ++p) {
            if (a_in(p))
              bytes += 16;
            else
              st_shared16(a_dst_of(p), make_uint4(0, 0, 0, 0));
          }
#pragma unroll 1
          for (int p = 0; p < B_PASSES; ++p) {
            if (b_in(p))
              bytes += 16;
            else
              st_shared16(b_dst_of(p), make_uint4(0, 0, 0, 0));
          }
          fence_proxy_async();  // the zeros, before the consumers' wgmma reads
          mbar_arrive_expect_tx(full, bytes);
          // Pass 2: exactly the copies counted in pass 1, 16 bytes each.
#pragma unroll 1
          for (int p = 0; p < A_PASSES; ++p)
            if (a_in(p)) bulk_copy16(a_dst_of(p), A + (long long)a_row(p) * K + ka, full);
#pragma unroll 1
          for (int p = 0; p < B_PASSES; ++p)
            if (b_in(p)) bulk_copy16(b_dst_of(p), B + (long long)(k0 + b_row(p)) * N + b_n, full);
        } else if (vec) {
#pragma unroll 1
          for (int p = 0; p < A_PASSES; ++p) {
            const bool in = a_in(p);
            cp_async16(a_dst_of(p), in ? A + (long long)a_row(p) * K + ka : A, in ? 16 : 0);
          }
#pragma unroll 1
          for (int p = 0; p < B_PASSES; ++p) {
            const bool in = b_in(p);
            cp_async16(b_dst_of(p), in ? B + (long long)(k0 + b_row(p)) * N + b_n : B, in ? 16 : 0);
          }
          mbar_arrive_cp_async(full);  // this thread's arrival, once its copies have landed
        } else {
#pragma unroll 1
          for (int p = 0; p < A_PASSES; ++p) {
            const int m = a_row(p);
            st_shared16(a_dst_of(p),
                        gather8(A + (long long)(m < M ? m : 0) * K + ka, m < M ? K - ka : 0));
          }
#pragma unroll 1
          for (int p = 0; p < B_PASSES; ++p) {
            const int k = k0 + b_row(p);
            st_shared16(b_dst_of(p),
                        gather8(B + (long long)(k < K ? k : 0) * N + b_n, k < K ? N - b_n : 0));
          }
          fence_proxy_async();
          mbar_arrive(full);  // releases the stores above
        }
      }
    }
    // Leave no cp.async in flight behind an exited thread. (Bulk copies need no wait here: the
    // consumers wait for every one of them on full[] before the block can finish.)
    if (COPY == 1) cp_async_wait<0>();
    return;
  }

  // Consumers.
  setmaxnreg_inc<232>();
  const int cw = wg - 1;  // consumer warpgroup: rows cw * WG_ROWS of the tile
  const int warp = (tid & 127) >> 5, lane = tid & 31;
  const bool c_vec2 = (N % 2 == 0) && ((size_t)C % 4 == 0);
  // Descriptors in stage 0 (see the header). A stage adds STAGE_BYTES to the address; a k16 step
  // 32 bytes along A's rows and 16 rows (2048 bytes) down B's blocks; a 64-row tile of A 64 rows
  // (8192 bytes).
  const unsigned long long a_desc0 = make_desc(smem0 + cw * WG_ROWS * 128, 16, 1024);
  const unsigned long long b_desc0 = make_desc(smem0 + A_STAGE_BYTES, B_BLOCK_BYTES, 1024);
  float acc[MT][ACC];
  int step = 0;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    int bm, bn;
    tile_origin(t, tiles_m, tiles_n, &bm, &bn);
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < ACC; ++j) acc[i][j] = 0.0f;

    int prev = 0;  // the stage of the previous K step, released once its wgmma have finished
    for (int kt = 0; kt < KT; ++kt, ++step) {
      const int s = step % STAGES;
      mbar_wait(full0 + 8 * s, (step / STAGES) & 1);
      fence_proxy_async();  // the generic-proxy writes seen through the barrier, before wgmma
      const unsigned long long stage = (unsigned)(s * STAGE_BYTES) >> 4;
#pragma unroll
      for (int i = 0; i < MT; ++i) fence_operands(acc[i], ACC);
      wgmma_fence();  // the accumulators' last ordinary writes (the zeroing) come first
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const unsigned long long bd = b_desc0 + stage + (kk * 2048 >> 4);
#pragma unroll
        for (int i = 0; i < MT; ++i)
          wgmma_tile(acc[i], a_desc0 + stage + ((i * 64 * 128 + kk * 32) >> 4), bd);
      }
      wgmma_commit();
      wgmma_wait<1>();  // step - 1 is done: its stage goes back to the producer
#pragma unroll
      for (int i = 0; i < MT; ++i) fence_operands(acc[i], ACC);
      if (kt > 0 && lane == 0) mbar_arrive(empty0 + 8 * prev);
      prev = s;
    }
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < MT; ++i) fence_operands(acc[i], ACC);
    if (lane == 0) mbar_arrive(empty0 + 8 * prev);  // the tile's last stage

    // The tile in fp16, rounded once, stored from the accumulators (guarded at the edges).
    const int m0 = bm + cw * WG_ROWS + warp * 16 + (lane >> 2);
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int m = m0 + i * 64;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int n = bn + j * 8 + (lane & 3) * 2;
        store2(C, M, N, c_vec2, m, n, acc[i][4 * j], acc[i][4 * j + 1]);
        store2(C, M, N, c_vec2, m + 8, n, acc[i][4 * j + 2], acc[i][4 * j + 3]);
      }
    }
  }
}
