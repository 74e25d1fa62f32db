// In-batch negatives gathered from every rank (sentence-transformers' gather_across_devices):
// each rank's micro-batch embeddings, [C * n_r, H] column by column (data::CollateRows), are
// all-gathered into the global micro-batch's, [C * N, H] column by column with the ranks' rows in
// rank order (N = the sum of n_r), so that every anchor's candidates are every rank's positives
// and hard negatives. Every rank then takes the loss over the global batch and its gradient with
// respect to every global embedding (the same values on every rank), and back-propagates the
// rows of its own texts (LocalRows): gradients flow through the gathered embeddings, as
// sentence-transformers' all_gather_with_grad makes them, and the summed parameter gradients are
// exactly one process's on the global batch. Only rank 0 adds the loss to the step's sum (the
// ranks' sums are added for the log).
#ifndef XLMR_FRAMEWORK_TRAIN_GATHERED_ROWS_H_
#define XLMR_FRAMEWORK_TRAIN_GATHERED_ROWS_H_

#include <cstdint>
#include <vector>

#include "framework/distributed/communicator.h"
#include "framework/tensor/tensor.h"

namespace xlmr::train {

struct GatheredRows {
  Tensor embeddings;           // [C * N, H] f32, column by column, ranks in order
  Tensor targets;              // [N] i32 = 0..N-1 on the embeddings' device
  std::vector<int64_t> rows;   // n_r of every rank
  int64_t offset = 0;          // this rank's first row among the N
  int64_t columns = 0;         // C
};

// [in] local [C * n, H] f32 on `device`, or undefined for a rank without rows this micro-step;
// columns C >= 2. Every rank must call it for the same micro-step (it communicates: the row
// counts and widths through host doubles, the embeddings through Communicator::AllGather).
GatheredRows GatherRows(const Tensor& local, int64_t columns, Device device, distributed::Communicator& comm);

// This rank's rows of `global` ([C * N, H], laid out as GatheredRows::embeddings): [C * n, H].
Tensor LocalRows(const Tensor& global, const GatheredRows& layout, distributed::Communicator& comm);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_GATHERED_ROWS_H_
