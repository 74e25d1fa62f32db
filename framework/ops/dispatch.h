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
// CPU tensors run the CPU kernel. CUDA tensors abort with "ops::Linear has no CUDA kernel yet"
// until kernels/cuda implements the op; the CUDA backend then adds an overload of
// DispatchByDevice taking a second (CUDA) callable, and each op passes its kernel there.
#ifndef XLMR_FRAMEWORK_OPS_DISPATCH_H_
#define XLMR_FRAMEWORK_OPS_DISPATCH_H_

#include <initializer_list>

#include "framework/core/device.h"
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
  return cpu_kernel();
}

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_DISPATCH_H_
