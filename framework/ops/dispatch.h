// How an op picks its backend: the one place where framework/ops meets kernels/{cpu,cuda}.
//
// Every op in framework/ops follows the same pattern (linear.cc is the model to copy):
//
//   Tensor Linear(const Tensor& x, const Tensor& weight, const Tensor& bias, DType out_dtype) {
//     constexpr const char* kOp = "ops::Linear";
//     const Device device = CommonDevice(kOp, {x, weight, bias});
//     ... XLMR_CHECK shapes and dtypes (checks.h) ...
//     return DispatchByDevice(kOp, device, [&] {
//       return kernels::cpu::LinearForward(x, weight, bias, out_dtype);
//     });
//   }
//
// CPU tensors run the CPU kernel. An op with a CUDA kernel passes it as a second callable,
// wrapped in XLMR_CUDA_KERNEL so that a build without CUDA compiles it out:
//
//   #ifdef XLMR_WITH_CUDA
//   #include "kernels/cuda/linear.h"
//   #endif
//   ...
//     return DispatchByDevice(kOp, device,
//         [&] { return kernels::cpu::LinearForward(x, weight, bias, out_dtype); },
//         XLMR_CUDA_KERNEL(kernels::cuda::LinearForward(x, weight, bias, out_dtype)));
//
// CUDA tensors of an op without a CUDA kernel abort with "ops::Linear has no CUDA kernel yet".
//
// Every backend call is one op of the profiler (framework/profile/profiler.h), named `op_name`:
// counted for metrics.jsonl's kernel_launches on the CPU, and timed while a profile records.
#ifndef XLMR_FRAMEWORK_OPS_DISPATCH_H_
#define XLMR_FRAMEWORK_OPS_DISPATCH_H_

#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "framework/core/device.h"
#include "framework/profile/profiler.h"
#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// The device shared by all defined tensors in `tensors` (undefined handles, e.g. an absent
// bias, are skipped). Aborts, naming `op_name`, when they live on different devices or when
// none is defined.
Device CommonDevice(const char* op_name, std::initializer_list<Tensor> tensors);

// Aborts with "<op_name> has no CUDA kernel yet".
[[noreturn]] void FailNoCudaKernel(const char* op_name);

// Runs `cpu_kernel()` (any callable; its result is returned) when `device` is the CPU.
template <typename CpuKernel>
decltype(auto) DispatchByDevice(const char* op_name, Device device, CpuKernel&& cpu_kernel) {
  if (device != Device::kCpu) FailNoCudaKernel(op_name);
  profile::OpScope op(op_name, profile::OpKind::kKernelCall);
  return cpu_kernel();
}

// The CUDA kernel call `call` as a callable in a CUDA build, nullptr otherwise.
#ifdef XLMR_WITH_CUDA
#define XLMR_CUDA_KERNEL(call) [&] { return call; }
#else
#define XLMR_CUDA_KERNEL(call) nullptr
#endif

// Runs `cpu_kernel()` on the CPU and `cuda_kernel()` on CUDA (nullptr: no CUDA kernel in this
// build, which aborts naming the op).
template <typename CpuKernel, typename CudaKernel>
decltype(auto) DispatchByDevice(const char* op_name, Device device, CpuKernel&& cpu_kernel,
                                CudaKernel&& cuda_kernel) {
  if constexpr (std::is_same_v<std::decay_t<CudaKernel>, std::nullptr_t>) {
    return DispatchByDevice(op_name, device, std::forward<CpuKernel>(cpu_kernel));
  } else {
    profile::OpScope op(op_name, profile::OpKind::kKernelCall);
    if (device == Device::kCpu) return cpu_kernel();
    return cuda_kernel();
  }
}

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_DISPATCH_H_
