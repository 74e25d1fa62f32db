#include "framework/train/gathered_rows.h"

#include <algorithm>

#include "framework/core/check.h"
#include "framework/ops/elementwise.h"

namespace xlmr::train {

GatheredRows GatherRows(const Tensor& local, int64_t columns, Device device, distributed::Communicator& comm) {
  XLMR_CHECK(!local.defined() || (local.dtype() == DType::kF32 && local.rank() == 2 && columns >= 2 &&
                                  local.dim(0) % columns == 0))
      << "gathered rows: embeddings must be [C * n, H] f32 with C = " << columns;
  const int ranks = comm.world_size();
  const int64_t local_rows = local.defined() ? local.dim(0) / columns : 0;
  // (rows, width) of every rank; a rank without rows knows no width.
  const std::vector<double> shapes =
      comm.AllGatherDoubles({static_cast<double>(local_rows), local.defined() ? static_cast<double>(local.dim(1)) : 0.0});
  GatheredRows g;
  g.columns = columns;
  int64_t total = 0, width = 0;
  for (int r = 0; r < ranks; ++r) {
    g.rows.push_back(static_cast<int64_t>(shapes[2 * r]));
    width = std::max(width, static_cast<int64_t>(shapes[2 * r + 1]));
    if (r == comm.rank()) g.offset = total;
    total += g.rows.back();
  }
  // Every rank's block at its place in one buffer, rank-major, then the global column-major layout.
  std::vector<int64_t> elements;
  for (int64_t n : g.rows) elements.push_back(columns * n * width);
  Tensor buffer = Tensor::Zeros({columns * total, width}, DType::kF32, device);
  if (local_rows > 0) {
    Tensor mine = buffer.Slice(columns * g.offset, columns * (g.offset + local_rows));
    ops::CastInto(local, &mine);
  }
  comm.AllGather(buffer, elements);
  g.embeddings = Tensor::Empty({columns * total, width}, DType::kF32, device, MemoryCategory::kActivations);
  int64_t block = 0, first = 0;  // a rank's block in the buffer; its first row among the N
  for (int r = 0; r < ranks; ++r) {
    const int64_t n = g.rows[r];
    for (int64_t c = 0; c < columns && n > 0; ++c) {
      Tensor to = g.embeddings.Slice(c * total + first, c * total + first + n);
      ops::CastInto(buffer.Slice(block + c * n, block + (c + 1) * n), &to);
    }
    block += columns * n;
    first += n;
  }
  Tensor targets = Tensor::Zeros({total}, DType::kI32, Device::kCpu, MemoryCategory::kActivations);
  for (int64_t i = 0; i < total; ++i) targets.data<int32_t>()[i] = static_cast<int32_t>(i);
  g.targets = targets.ToDevice(device);
  return g;
}

Tensor LocalRows(const Tensor& global, const GatheredRows& layout, distributed::Communicator& comm) {
  const int64_t n = layout.rows[comm.rank()], total = global.dim(0) / layout.columns;
  Tensor local = Tensor::Empty({layout.columns * n, global.dim(1)}, DType::kF32, global.device(),
                               MemoryCategory::kActivations);
  for (int64_t c = 0; c < layout.columns && n > 0; ++c) {
    Tensor to = local.Slice(c * n, (c + 1) * n);
    ops::CastInto(global.Slice(c * total + layout.offset, c * total + layout.offset + n), &to);
  }
  return local;
}

}  // namespace xlmr::train
