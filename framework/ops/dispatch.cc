#include "framework/ops/dispatch.h"

#include "framework/core/check.h"

namespace xlmr::ops {

Device CommonDevice(const char* op_name, std::initializer_list<Tensor> tensors) {
  bool found = false;
  Device device = Device::kCpu;
  for (const Tensor& tensor : tensors) {
    if (!tensor.defined()) continue;
    if (!found) {
      device = tensor.device();
      found = true;
      continue;
    }
    XLMR_CHECK(tensor.device() == device)
        << op_name << ": tensors on different devices (" << DeviceName(device) << " and "
        << DeviceName(tensor.device()) << ")";
  }
  XLMR_CHECK(found) << op_name << ": no defined input tensor";
  return device;
}

void FailNoCudaKernel(const char* op_name) {
  internal::CheckFailure(__FILE__, __LINE__, "device == Device::kCpu").stream()
      << op_name << " has no CUDA kernel yet";
  // CheckFailure's destructor aborts; this line is never reached.
  __builtin_unreachable();
}

}  // namespace xlmr::ops
