// Batches of rows that hold several texts each (sentence-transformers' (anchor, positive,
// negative...) columns), from one TokenizedDataset that stores them column by column: with R rows
// and C columns, row r's column c is example c * R + r (every column tokenized on its own).
// A batch of rows r_1..r_N is the examples of column 0 for those rows, then column 1's, ..., so
// that the encoder embeds all C * N texts in one pass and the embeddings come out in the
// layout of train::Objective::kInBatchNegatives, with its targets 0..N-1 as the labels.
#ifndef XLMR_FRAMEWORK_DATA_COLUMN_COLLATE_H_
#define XLMR_FRAMEWORK_DATA_COLUMN_COLLATE_H_

#include <cstdint>
#include <vector>

#include "framework/data/collate.h"
#include "framework/data/tokenized_dataset.h"

namespace xlmr::data {

// How a dataset's examples make rows: `columns` texts per row (1: every example is a row).
struct RowLayout {
  int64_t columns = 1;
  // Rows of `dataset` (its size must be a multiple of columns: checked).
  int64_t Rows(const TokenizedDataset& dataset) const;
};

// The examples of `rows` in the order above (column-major over the batch).
std::vector<int64_t> ColumnExamples(const std::vector<int64_t>& rows, int64_t columns, int64_t row_count);

// The batch of `rows` (indices of rows, as the batch planner gives them): with one column,
// Collate / CollatePacked of the examples themselves; with more, the batch of ColumnExamples
// with labels [N] i32 = 0..N-1 and loss_terms N (one term per anchor), or, when the dataset has
// targets (scored pairs: AssignRegressionTargets), labels [N] f32 = the rows' scores and
// loss_terms 1 (CoSENT's one term per batch; 0 for no rows). `packed` picks the packed form.
Batch CollateRows(const TokenizedDataset& dataset, const std::vector<int64_t>& rows, const RowLayout& layout,
                  bool packed, int32_t pad_id, int32_t segment_separator_id = -1);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_COLUMN_COLLATE_H_
