// Parallel loops for the CPU kernels: one process-wide pool of worker threads that splits an
// index range [0, n) into parts and runs them on the pool and on the calling thread.
//
// Thread count: the CPU backend uses as many threads as OpenBLAS does
// (openblas_get_num_threads(): OPENBLAS_NUM_THREADS, else one per core), so one setting governs
// the GEMMs and the kernels around them. With one thread every loop runs inline, as before the
// pool existed.
//
// Determinism contract: ParallelFor decides only WHICH thread computes which indices. A loop
// body that computes each index from the inputs alone (no state carried between indices, no
// sum across indices) gives bit-identical results for every thread count and schedule. A
// reduction must stay inside one index: parallelise a column sum over columns (each column
// still sums its rows in order), never over the rows being summed.
//
// Thread safety: the body runs concurrently on several threads, so it may write only the
// indices it is given and must not allocate Tensors (the allocator's accounting is not
// synchronised). A ParallelFor issued from inside another one, from a second thread while the
// pool is busy, or in a child process forked after the pool started runs inline.
#ifndef XLMR_KERNELS_CPU_PARALLEL_H_
#define XLMR_KERNELS_CPU_PARALLEL_H_

#include <cstdint>
#include <type_traits>

namespace xlmr::kernels::cpu {

// Threads a ParallelFor may use, the caller included (>= 1): OpenBLAS's thread count as first
// read. That first call, made when this library loads, then sets OpenBLAS to one thread, so
// that every sgemm runs on the thread that calls it and the GEMMs are spread over this pool
// instead (gemm.h).
int CpuThreadCount();

namespace parallel_internal {

using RangeFn = void (*)(const void* body, int64_t begin, int64_t end);

// Runs invoke(body, begin, end) over parts of [0, n), each a multiple of `grain` long (the last
// may be shorter), on the pool and the calling thread; returns when all parts are done.
void RunParts(int64_t n, int64_t grain, RangeFn invoke, const void* body);

}  // namespace parallel_internal

// Calls body(begin, end) for disjoint ranges that together cover [0, n), possibly at the same
// time on several threads, and returns when every range is done. Every range but the last is
// a multiple of `grain` (>= 1) long: pick it so that one range is worth handing to another
// thread (tens of microseconds of work) and so that range boundaries fall where the body
// wants them (a chunk, a row). n <= grain runs body(0, n) inline.
template <typename Body>
void ParallelFor(int64_t n, int64_t grain, const Body& body) {
  if (n <= 0) return;
  if (n <= grain) {
    body(int64_t{0}, n);
    return;
  }
  parallel_internal::RunParts(
      n, grain,
      [](const void* b, int64_t begin, int64_t end) { (*static_cast<const Body*>(b))(begin, end); },
      &body);
}

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_PARALLEL_H_
