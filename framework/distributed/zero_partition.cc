#include "framework/distributed/zero_partition.h"

#include <algorithm>

#include "framework/core/check.h"

namespace xlmr::distributed {

ZeroPartition::ZeroPartition(int64_t total_elements, int world_size) : total_(total_elements) {
  constexpr int64_t kAlign = ParameterStore::kAlignmentElements;
  XLMR_CHECK(world_size >= 1 && total_elements >= 0 && total_elements % kAlign == 0)
      << "ZeroPartition of " << total_elements << " elements over " << world_size << " ranks";
  const int64_t per_rank = (total_elements + world_size - 1) / world_size;
  const int64_t size = (per_rank + kAlign - 1) / kAlign * kAlign;
  for (int r = 0; r < world_size; ++r) {
    const int64_t begin = std::min(r * size, total_elements);
    const int64_t end = std::min((r + 1) * size, total_elements);
    shards_.push_back({begin, end - begin});
  }
}

std::vector<int64_t> ZeroPartition::ShardSizes() const {
  std::vector<int64_t> sizes;
  for (const FlatRange& shard : shards_) sizes.push_back(shard.size);
  return sizes;
}

std::vector<int64_t> ZeroPartition::CountsWithin(const FlatRange& range) const {
  XLMR_CHECK(range.offset >= 0 && range.size >= 0 && range.offset + range.size <= total_)
      << "range [" << range.offset << ", " << range.offset + range.size << ") outside the " << total_
      << " elements";
  std::vector<int64_t> counts;
  for (const FlatRange& shard : shards_) {
    const int64_t begin = std::max(range.offset, shard.offset);
    const int64_t end = std::min(range.offset + range.size, shard.offset + shard.size);
    counts.push_back(std::max<int64_t>(0, end - begin));
  }
  return counts;
}

Tensor GatherShardsToRoot(Communicator& comm, const ZeroPartition& partition, const Tensor& shard, int root) {
  const FlatRange& own = partition.shard(comm.rank());
  XLMR_CHECK(shard.dtype() == DType::kF32 && shard.numel() == own.size)
      << "GatherShardsToRoot: this rank's shard has " << own.size << " f32 elements, got " << shard.numel();
  const Tensor host = shard.device() == Device::kCpu ? shard : shard.ToDevice(Device::kCpu, MemoryCategory::kWorkspace);
  Tensor all;
  if (comm.rank() == root) {
    all = Tensor::Zeros({partition.total_elements()}, DType::kF32, Device::kCpu, MemoryCategory::kWorkspace);
  }
  comm.GatherToRoot(host.numel() > 0 ? host.data<float>() : nullptr, all.defined() ? all.data<float>() : nullptr,
                    partition.ShardSizes(), root);
  return all;
}

}  // namespace xlmr::distributed
