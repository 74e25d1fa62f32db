// Fatal checks for CUDA runtime, cuBLASLt and NCCL calls. Every such call in the project goes
// through one of these, so a failure names the file, the line, the call and the library's own
// error text instead of surfacing later as a wrong number.
//
//   CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
//   CUBLAS_CHECK(cublasLtMatmul(...)) << "m=" << m;        // extra context may be streamed
//   NCCL_CHECK(ncclAllReduce(...));
//   MyKernel<<<blocks, threads, 0, stream>>>(...);
//   KERNEL_LAUNCH_CHECK();
//
// A failure aborts with e.g.
//   kernels/cuda/cuda_allocator.cc:31: check failed: cudaMalloc(&pointer, bytes)
//     -> CUDA error 2 cudaErrorMemoryAllocation: out of memory
// These are for device and library errors, which the process cannot recover from; problems in
// user input are reported with absl::Status before any CUDA call is made.
//
// This header needs the CUDA runtime headers. CUBLAS_CHECK and NCCL_CHECK expand to cuBLASLt /
// NCCL calls, so the file that uses them includes <cublasLt.h> / <nccl.h> itself (and only
// those files then link the library).
#ifndef XLMR_KERNELS_CUDA_CUDA_CHECK_H_
#define XLMR_KERNELS_CUDA_CUDA_CHECK_H_

#include <cuda_runtime_api.h>

#include "framework/core/check.h"

// Each macro evaluates `expr` once. The `for` runs its body only on failure, and the body never
// returns (CheckFailure aborts when the statement ends), so it is a plain `if` that still lets the
// caller stream more context after the macro, exactly like XLMR_CHECK.
#define CUDA_CHECK(expr)                                                                   \
  for (const cudaError_t xlmr_cuda_status_ = (expr); xlmr_cuda_status_ != cudaSuccess;)    \
  ::xlmr::internal::CheckFailure(__FILE__, __LINE__, #expr).stream()                       \
      << "-> CUDA error " << static_cast<int>(xlmr_cuda_status_) << " "                    \
      << cudaGetErrorName(xlmr_cuda_status_) << ": " << cudaGetErrorString(xlmr_cuda_status_) \
      << " "

// For cuBLASLt calls (cublasStatus_t). Uses cuBLASLt's own status strings, so the caller needs
// only libcublasLt, not libcublas.
#define CUBLAS_CHECK(expr)                                                                    \
  for (const cublasStatus_t xlmr_cublas_status_ = (expr);                                     \
       xlmr_cublas_status_ != CUBLAS_STATUS_SUCCESS;)                                         \
  ::xlmr::internal::CheckFailure(__FILE__, __LINE__, #expr).stream()                          \
      << "-> cuBLASLt status " << static_cast<int>(xlmr_cublas_status_) << " "                \
      << cublasLtGetStatusName(xlmr_cublas_status_) << ": "                                   \
      << cublasLtGetStatusString(xlmr_cublas_status_) << " "

// For NCCL calls (ncclResult_t). ncclGetLastError adds NCCL's detail (which peer, which
// transport), which the result code alone does not carry.
#define NCCL_CHECK(expr)                                                                       \
  for (const ncclResult_t xlmr_nccl_status_ = (expr); xlmr_nccl_status_ != ncclSuccess;)       \
  ::xlmr::internal::CheckFailure(__FILE__, __LINE__, #expr).stream()                           \
      << "-> NCCL error " << static_cast<int>(xlmr_nccl_status_) << ": "                       \
      << ncclGetErrorString(xlmr_nccl_status_) << " (" << ncclGetLastError(nullptr) << ") "

// Right after every <<<...>>> launch: catches launch-configuration errors (bad grid, too much
// shared memory), which the launch itself cannot return. Errors inside the kernel are
// asynchronous and surface at the next synchronising call; run with CUDA_LAUNCH_BLOCKING=1 to
// make them appear here instead.
#define KERNEL_LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError()) << "(kernel launch) "

#endif  // XLMR_KERNELS_CUDA_CUDA_CHECK_H_
