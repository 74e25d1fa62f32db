#include "framework/distributed/communicator.h"

#include "framework/core/check.h"

namespace xlmr::distributed {

void Communicator::AllReduceSumStateDoubles(Tensor& data, int64_t first, int64_t count) {
  XLMR_CHECK(data.device() == Device::kCpu && data.dtype() == DType::kI64 && first >= 0 && count >= 0 &&
             first + count <= data.numel())
      << "AllReduceSumStateDoubles: doubles [" << first << ", " << first + count << ") of a host I64 tensor of "
      << data.numel() << " elements";
  if (world_size() == 1 || count == 0) return;
  AllReduceSumDoubles(reinterpret_cast<double*>(data.data<int64_t>()) + first, static_cast<size_t>(count));
}

}  // namespace xlmr::distributed
