// ZeroPartition: which part of the flat parameter buffers each rank owns under ZeRO stage 1
// (--zero_stage=1; Rajbhandari et al. 2020, DeepSpeed's name).
//
// The flat buffers of a ParameterStore ([total] elements, every range 64-element aligned) are
// cut into world_size contiguous shards, rank r owning
//   [min(r * S, total), min((r + 1) * S, total)),  S = total / world_size rounded up to 64,
// so every boundary is a multiple of ParameterStore::kAlignmentElements (the shards' views keep
// the buffers' 128-byte alignment, and padding never straddles two owners in a way that
// matters: padding is zero everywhere), the shards tile the buffer in rank order, and they
// differ in size by less than 64 elements except the last, which may be shorter (or empty when
// total is small against world_size). Contiguous shards keep the optimizer's state of a rank
// one allocation and its AdamW pass one pass over views, and make a gradient bucket's part
// for each rank its intersection with that rank's shard (CountsWithin), the counts a
// reduce-scatter of the bucket takes.
#ifndef XLMR_FRAMEWORK_DISTRIBUTED_ZERO_PARTITION_H_
#define XLMR_FRAMEWORK_DISTRIBUTED_ZERO_PARTITION_H_

#include <cstdint>
#include <vector>

#include "framework/distributed/communicator.h"
#include "framework/tensor/parameter_store.h"

namespace xlmr::distributed {

class ZeroPartition {
 public:
  // [in] total_elements: a multiple of 64 (ParameterStore::total_elements()); world_size >= 1.
  ZeroPartition(int64_t total_elements, int world_size);

  int world_size() const { return static_cast<int>(shards_.size()); }
  int64_t total_elements() const { return total_; }
  // Rank r's shard of the flat buffers.
  const FlatRange& shard(int rank) const { return shards_[rank]; }
  // Every shard's size, in rank order: the counts of an all-gather of a whole flat buffer.
  std::vector<int64_t> ShardSizes() const;
  // For each rank, how many elements of `range` (inside the buffer) fall in its shard, in rank
  // order: `range` cut at the shard boundaries, the counts a reduce-scatter of it takes. They
  // sum to range.size.
  std::vector<int64_t> CountsWithin(const FlatRange& range) const;

 private:
  int64_t total_;
  std::vector<FlatRange> shards_;
};

// A checkpoint of sharded state: every rank's [partition.shard(rank).size] f32 `shard` (any
// device) gathered on `root` into a host tensor [total_elements] in the flat layout (category
// kWorkspace: a transient copy, not optimizer state); an empty handle on the other ranks. A
// collective: every rank calls it.
Tensor GatherShardsToRoot(Communicator& comm, const ZeroPartition& partition, const Tensor& shard, int root);

}  // namespace xlmr::distributed

#endif  // XLMR_FRAMEWORK_DISTRIBUTED_ZERO_PARTITION_H_
