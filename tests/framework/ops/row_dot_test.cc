// framework/ops/row_dot.h on the CPU: the forward against dot products summed in long double and
// against the contract's float sum in column order (bit for bit), the backward against its
// definition (bit for bit) and against central finite differences, views and empty shapes, and
// the motivating use, sentence-transformers' util.pairwise_cos_sim (tests/golden/cosent,
// make_cosent_golden.py), forward and backward through ops::NormalizeRows.
//
// Tolerances: forward against long double: the textbook bound of a recursive float sum,
// (H + 1) * 2^-24 * sum_j |a_j b_j| (one rounding per product, H per sum), which a wrong order
// still meets but a missing or doubled term does not; the column-order float loop and the
// backward's products are exact contracts (this test builds with -ffp-contract=off, as the kernel
// does). Backward against finite differences of the double forward: 1e-7 of the largest entry
// (the dot is bilinear, so central differences are exact up to cancellation, ~1e-16 / 1e-6).
// Against pairwise_cos_sim, see PairwiseCosSimMatchesSentenceTransformers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "framework/io/safetensors.h"
#include "framework/ops/row_dot.h"
#include "framework/ops/row_normalize.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::FiniteDifferenceGradient;
using testing::MaxNormalisedError;
using testing::RandomValues;
using testing::TensorFrom;
using testing::ToDoubles;

const char kGolden[] = "tests/golden/cosent/golden.safetensors";

struct Rows {
  int64_t rows, width;
};

TEST(RowDotsTest, ForwardIsTheColumnOrderFloatSumOfEachRow) {
  for (const Rows& shape : {Rows{1, 1}, Rows{3, 7}, Rows{5, 768}, Rows{2, 0}}) {
    const std::vector<float> a = RandomValues(shape.rows * shape.width, 41, -2.0f, 2.0f);
    const std::vector<float> b = RandomValues(shape.rows * shape.width, 42, -2.0f, 2.0f);
    const Tensor dots = ops::RowDots(TensorFrom({shape.rows, shape.width}, DType::kF32, a),
                                     TensorFrom({shape.rows, shape.width}, DType::kF32, b));
    ASSERT_EQ(dots.shape(), Shape({shape.rows}));
    ASSERT_EQ(dots.dtype(), DType::kF32);
    const std::vector<float> got = dots.ToFloatVector();
    for (int64_t r = 0; r < shape.rows; ++r) {
      long double exact = 0, magnitude = 0;
      float in_order = 0.0f;
      for (int64_t j = 0; j < shape.width; ++j) {
        const int64_t e = r * shape.width + j;
        exact += static_cast<long double>(a[e]) * b[e];
        magnitude += std::fabs(static_cast<long double>(a[e]) * b[e]);
        const float product = a[e] * b[e];
        in_order = in_order + product;
      }
      const double bound = (shape.width + 1) * std::ldexp(1.0, -24) * static_cast<double>(magnitude);
      EXPECT_NEAR(got[r], static_cast<double>(exact), bound) << "row " << r << " of width " << shape.width;
      EXPECT_EQ(got[r], in_order) << "row " << r << " of width " << shape.width << ": not the column-order sum";
    }
  }
}

TEST(RowDotsTest, BackwardIsEachSideTimesTheOtherAndMatchesFiniteDifferences) {
  const int64_t rows = 4, width = 6;
  const std::vector<float> a = RandomValues(rows * width, 43);
  const std::vector<float> b = RandomValues(rows * width, 44);
  const std::vector<float> d_dots = RandomValues(rows, 45, -3.0f, 3.0f);
  Tensor da = Tensor::Zeros({rows, width}, DType::kF32), db = Tensor::Zeros({rows, width}, DType::kF32);
  ops::RowDotsBackward(TensorFrom({rows}, DType::kF32, d_dots), TensorFrom({rows, width}, DType::kF32, a),
                       TensorFrom({rows, width}, DType::kF32, b), &da, &db);
  const std::vector<float> got_a = da.ToFloatVector(), got_b = db.ToFloatVector();
  for (int64_t e = 0; e < rows * width; ++e) {
    EXPECT_EQ(got_a[e], d_dots[e / width] * b[e]) << "da element " << e;
    EXPECT_EQ(got_b[e], d_dots[e / width] * a[e]) << "db element " << e;
  }
  // loss(a, b) = sum_i d_dots[i] * (a[i,:] . b[i,:]) in double, over the concatenation [a, b].
  auto loss = [&](const std::vector<double>& point) {
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double dot = 0;
      for (int64_t j = 0; j < width; ++j) dot += point[r * width + j] * point[rows * width + r * width + j];
      total += d_dots[r] * dot;
    }
    return total;
  };
  std::vector<double> point = ToDoubles(a);
  const std::vector<double> b_doubles = ToDoubles(b);
  point.insert(point.end(), b_doubles.begin(), b_doubles.end());
  const std::vector<double> fd = FiniteDifferenceGradient(loss, point);
  std::vector<float> analytic = got_a;
  analytic.insert(analytic.end(), got_b.begin(), got_b.end());
  EXPECT_LE(MaxNormalisedError(analytic, fd), 1e-7);
}

TEST(RowDotsTest, BackwardWritesIntoViewsAndOnlyThere) {
  // Two row blocks' gradients land in one tensor: a call overwrites its own rows only.
  Tensor da = TensorFrom({3, 2}, DType::kF32, std::vector<float>(6, 7.0f));
  Tensor db = TensorFrom({3, 2}, DType::kF32, std::vector<float>(6, 7.0f));
  Tensor da_rows = da.Slice(1, 3), db_rows = db.Slice(1, 3);
  ops::RowDotsBackward(TensorFrom({2}, DType::kF32, {2.0f, -1.0f}), TensorFrom({2, 2}, DType::kF32, {1, 2, 3, 4}),
                       TensorFrom({2, 2}, DType::kF32, {5, 6, 7, 8}), &da_rows, &db_rows);
  EXPECT_EQ(da.ToFloatVector(), (std::vector<float>{7, 7, 10, 12, -7, -8}));
  EXPECT_EQ(db.ToFloatVector(), (std::vector<float>{7, 7, 2, 4, -3, -4}));
}

TEST(RowDotsTest, NoRowsGiveNoDots) {
  const Tensor none = Tensor::Zeros({0, 4}, DType::kF32);
  EXPECT_EQ(ops::RowDots(none, none).shape(), Shape({0}));
  Tensor da = Tensor::Zeros({0, 4}, DType::kF32), db = Tensor::Zeros({0, 4}, DType::kF32);
  ops::RowDotsBackward(Tensor::Zeros({0}, DType::kF32), none, none, &da, &db);
  EXPECT_EQ(da.shape(), Shape({0, 4}));
}

TEST(RowDotsDeathTest, SidesMustHaveOneShape) {
  const Tensor a = TensorFrom({2, 3}, DType::kF32, RandomValues(6, 46));
  const Tensor b = TensorFrom({3, 2}, DType::kF32, RandomValues(6, 47));
  EXPECT_DEATH(ops::RowDots(a, b), "b must have shape");
  Tensor da = Tensor::Zeros({2, 3}, DType::kF32), db = Tensor::Zeros({2, 3}, DType::kF32);
  EXPECT_DEATH(ops::RowDotsBackward(Tensor::Zeros({3}, DType::kF32), a, a, &da, &db), "d_dots must have shape");
}

Tensor Golden(const io::SafetensorsFile& file, const std::string& name) {
  absl::StatusOr<Tensor> t = io::ToTensor(file, name);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

// max_i |got_i - expected_i| / max_i |expected_i|.
double ErrorOfLargest(const std::vector<float>& got, const std::vector<float>& expected) {
  double worst = 0, largest = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - expected[i]));
    largest = std::max(largest, std::fabs(static_cast<double>(expected[i])));
  }
  return worst / largest;
}

// CoSENTLoss's scores are scale * util.pairwise_cos_sim(a, b); here the scale rides on a's
// normalisation: RowDots(NormalizeRows(a, 20), NormalizeRows(b)). Torch normalises, sums its
// products in another order and multiplies by 20 last, each side in float32: the scores differ by
// a few float roundings of terms up to 20 in size (20 * 12 * 2^-24 = 1.4e-5 at worst; measured
// ~2e-6), bound 1e-6 of the scale (2e-5). The gradients (torch's d_scores through RowDotsBackward
// and NormalizeRowsBackward; the pairwise_cos_sim gradient torch computed) pass the same
// roundings and a division by the norms: bound 1e-6 of the largest entry (measured ~1e-7). A missing
// normalisation or scale, or swapped sides in the backward, are off by O(1).
TEST(RowDotsTest, PairwiseCosSimMatchesSentenceTransformers) {
  absl::StatusOr<io::SafetensorsFile> file = io::ReadSafetensors(kGolden);
  ASSERT_TRUE(file.ok()) << file.status();
  const float scale = 20.0f;
  const Tensor a = Golden(*file, "a"), b = Golden(*file, "b");
  const Tensor a_unit = ops::NormalizeRows(a, scale), b_unit = ops::NormalizeRows(b);
  const std::vector<float> scores = ops::RowDots(a_unit, b_unit).ToFloatVector();
  const std::vector<float> expected = Golden(*file, "scores").ToFloatVector();
  ASSERT_EQ(scores.size(), expected.size());
  double worst = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(scores[i]) - expected[i]));
    EXPECT_NEAR(scores[i], expected[i], 1e-6 * scale) << "pair " << i;
  }

  Tensor da_unit = Tensor::Zeros(a.shape(), DType::kF32), db_unit = Tensor::Zeros(b.shape(), DType::kF32);
  ops::RowDotsBackward(Golden(*file, "d_scores"), a_unit, b_unit, &da_unit, &db_unit);
  Tensor da = Tensor::Zeros(a.shape(), DType::kF32), db = Tensor::Zeros(b.shape(), DType::kF32);
  ops::NormalizeRowsBackward(da_unit, a, scale, &da);
  ops::NormalizeRowsBackward(db_unit, b, 1.0f, &db);
  const double error_a = ErrorOfLargest(da.ToFloatVector(), Golden(*file, "d_a").ToFloatVector());
  const double error_b = ErrorOfLargest(db.ToFloatVector(), Golden(*file, "d_b").ToFloatVector());
  EXPECT_LE(error_a, 1e-6);
  EXPECT_LE(error_b, 1e-6);
  std::printf("measured pairwise_cos_sim: scores %.3g, d_a %.3g, d_b %.3g of the largest\n", worst, error_a,
              error_b);
}

}  // namespace
}  // namespace xlmr
