// Round trips, compatibility with the Python `safetensors` library, ToTensor and writer errors.
// Malformed input is covered in safetensors_malformed_test.cc.
//
// Tolerance: 0 everywhere. Every value used is exactly representable in its dtype, the format
// stores raw bytes and F16/BF16 -> F32 widening is exact, so any difference is a bug.
#include "framework/io/safetensors.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

std::string TempPath(const std::string& name) { return ::testing::TempDir() + name; }

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

Tensor FloatTensor(const Shape& shape, DType dtype, const std::vector<float>& values) {
  Tensor tensor = Tensor::Zeros(shape, dtype);
  tensor.CopyFromFloats(values);
  return tensor;
}

template <typename T>
Tensor IntTensor(const Shape& shape, const std::vector<T>& values) {
  Tensor tensor = Tensor::Zeros(shape, DTypeOf<T>::value);
  std::memcpy(tensor.data<T>(), values.data(), values.size() * sizeof(T));
  return tensor;
}

// The tensor's bytes reinterpreted as T (copied: the bytes are not aligned).
template <typename T>
std::vector<T> ValuesOf(const SafetensorsTensor& tensor) {
  std::vector<T> values(tensor.bytes.size() / sizeof(T));
  std::memcpy(values.data(), tensor.bytes.data(), values.size() * sizeof(T));
  return values;
}

std::vector<float> FloatsOf(const SafetensorsFile& file, const std::string& name) {
  absl::StatusOr<Tensor> tensor = ToTensor(file, name);
  EXPECT_TRUE(tensor.ok()) << tensor.status();
  if (!tensor.ok()) return {};
  EXPECT_EQ(tensor->dtype(), DType::kF32);
  return tensor->ToFloatVector();
}

std::vector<NamedTensor> RoundTripTensors() {
  return {
      {"matrix", FloatTensor({2, 3}, DType::kF32, {1, -2, 0.5f, 1e-7f, -0.0f, 3e38f})},
      {"halves", FloatTensor({4}, DType::kF16, {1, -0.5f, 65504, 5.960464477539063e-8f})},
      {"brains", FloatTensor({2, 2}, DType::kBF16, {1, -2, 0.375f, 1e38f})},
      {"counts", IntTensor<int64_t>({3}, {-1, 0, int64_t{1} << 40})},
      {"indices", IntTensor<int32_t>({2}, {7, -250002})},
      {"scalar", FloatTensor({}, DType::kF32, {0.25f})},
      {"empty", Tensor::Zeros({0, 5}, DType::kF32)},
  };
}

TEST(SafetensorsTest, RoundTripWritesTheReferenceLayoutAndReadsBackEveryValue) {
  const std::string path = TempPath("round_trip.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, RoundTripTensors(), {{"format", "pt"}}).ok());

  // Header as the Python library writes it for these tensors (checked with safetensors 0.8.0):
  // descending dtype rank (I64, F32, I32, BF16, F16), then name; padded to a multiple of 8.
  const std::string bytes = ReadFileBytes(path);
  const std::string expected_header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("counts":{"dtype":"I64","shape":[3],"data_offsets":[0,24]},)"
      R"("empty":{"dtype":"F32","shape":[0,5],"data_offsets":[24,24]},)"
      R"("matrix":{"dtype":"F32","shape":[2,3],"data_offsets":[24,48]},)"
      R"("scalar":{"dtype":"F32","shape":[],"data_offsets":[48,52]},)"
      R"("indices":{"dtype":"I32","shape":[2],"data_offsets":[52,60]},)"
      R"("brains":{"dtype":"BF16","shape":[2,2],"data_offsets":[60,68]},)"
      R"("halves":{"dtype":"F16","shape":[4],"data_offsets":[68,76]}}       )";
  ASSERT_EQ(expected_header.size() % 8, 0u);
  ASSERT_EQ(bytes.size(), 8 + expected_header.size() + 76);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\xd0\x01\0\0\0\0\0\0", 8));  // 464, little-endian
  EXPECT_EQ(bytes.substr(8, expected_header.size()), expected_header);

  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->metadata(), ElementsAre(Pair("format", "pt")));
  EXPECT_THAT(file->names(),
              ElementsAre("counts", "empty", "matrix", "scalar", "indices", "brains", "halves"));
  EXPECT_THAT(FloatsOf(*file, "matrix"), ElementsAre(1, -2, 0.5f, 1e-7f, -0.0f, 3e38f));
  EXPECT_TRUE(std::signbit(FloatsOf(*file, "matrix")[4]));
  EXPECT_THAT(FloatsOf(*file, "halves"), ElementsAre(1, -0.5f, 65504, 5.960464477539063e-8f));
  EXPECT_THAT(FloatsOf(*file, "brains"),
              ElementsAre(1, -2, 0.375f, BFloat16ToFloat(FloatToBFloat16(1e38f))));
  EXPECT_THAT(FloatsOf(*file, "scalar"), ElementsAre(0.25f));
  EXPECT_TRUE(FloatsOf(*file, "empty").empty());
  EXPECT_THAT(ValuesOf<int64_t>(*file->Find("counts")), ElementsAre(-1, 0, int64_t{1} << 40));
  EXPECT_THAT(ValuesOf<int32_t>(*file->Find("indices")), ElementsAre(7, -250002));

  const SafetensorsTensor* scalar = file->Find("scalar");
  ASSERT_NE(scalar, nullptr);
  EXPECT_EQ(scalar->dtype, "F32");
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(file->Find("empty")->shape, (Shape{0, 5}));
  EXPECT_EQ(file->Find("brains")->dtype, "BF16");
  EXPECT_EQ(file->Find("counts")->dtype, "I64");
}

TEST(SafetensorsTest, NoMetadataAndNoTensorsGiveAPaddedEmptyObject) {
  const std::string path = TempPath("empty.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {}, {}).ok());
  EXPECT_EQ(ReadFileBytes(path), std::string("\x08\0\0\0\0\0\0\0{}      ", 16));
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->names().empty());
  EXPECT_TRUE(file->metadata().empty());
}

TEST(SafetensorsTest, EscapesAndReadsBackNamesLikeThePythonLibrary) {
  // Non-ASCII stays raw UTF-8; control characters, quote and backslash are escaped; '/' and
  // DEL are not. Expected bytes checked against safetensors 0.8.0 for the same tensors.
  const std::string name = "\xc3\xa9\n\x1f\x7f\"\\/\xf0\x9f\x98\x80";  // é, controls, 😀
  const std::string path = TempPath("names.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{name, Tensor::Zeros({1}, DType::kF32)}}, {}).ok());
  const std::string header = "{\"\xc3\xa9\\n\\u001f\x7f\\\"\\\\/\xf0\x9f\x98\x80\":"
                             R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_EQ(ReadFileBytes(path).substr(8, header.size()), header);
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->names(), ElementsAre(name));
}

// tests/framework/io/testdata/reference.safetensors was written by make_reference.py (Python
// safetensors 0.8.0 + torch); the expected values are the ones that script documents.
constexpr char kReferencePath[] = "tests/framework/io/testdata/reference.safetensors";

TEST(SafetensorsTest, ReadsAFileWrittenByThePythonLibrary) {
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(kReferencePath);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->metadata(), ElementsAre(Pair("format", "pt")));
  EXPECT_THAT(file->names(), ElementsAre("ids", "none", "scale", "weight", "brain", "half"));
  EXPECT_THAT(FloatsOf(*file, "weight"), ElementsAre(0.5f, -1.25f, 3.0f, 1e-3f, -0.0f, 65504.0f));
  EXPECT_THAT(FloatsOf(*file, "half"), ElementsAre(1.0f, -2.5f, 6.103515625e-05f));
  EXPECT_THAT(FloatsOf(*file, "brain"), ElementsAre(1.5f, -0x1.c4p+127f));
  EXPECT_THAT(FloatsOf(*file, "scale"), ElementsAre(0.125f));
  EXPECT_TRUE(FloatsOf(*file, "none").empty());
  EXPECT_THAT(ValuesOf<int64_t>(*file->Find("ids")), ElementsAre(-7, 250002));
  EXPECT_EQ(file->Find("weight")->shape, (Shape{2, 3}));
  EXPECT_EQ(file->Find("brain")->shape, (Shape{2, 1}));
  EXPECT_TRUE(file->Find("scale")->shape.empty());
  EXPECT_EQ(file->Find("none")->shape, (Shape{0, 4}));
}

TEST(SafetensorsTest, WritesTheSameBytesAsThePythonLibrary) {
  const std::vector<NamedTensor> tensors = {
      {"weight", FloatTensor({2, 3}, DType::kF32, {0.5f, -1.25f, 3.0f, 1e-3f, -0.0f, 65504.0f})},
      {"half", FloatTensor({3}, DType::kF16, {1.0f, -2.5f, 6.103515625e-05f})},
      // -3e38 rounds to nearest-even in bf16 exactly as torch rounded it in the script.
      {"brain", FloatTensor({2, 1}, DType::kBF16, {1.5f, -3.0e38f})},
      {"ids", IntTensor<int64_t>({2}, {-7, 250002})},
      {"scale", FloatTensor({}, DType::kF32, {0.125f})},
      {"none", Tensor::Zeros({0, 4}, DType::kF32)},
  };
  const std::string path = TempPath("ours.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, tensors, {{"format", "pt"}}).ok());
  const std::string reference = ReadFileBytes(kReferencePath);
  ASSERT_EQ(reference.size(), 454u);  // guards against a missing or replaced reference file
  EXPECT_EQ(ReadFileBytes(path), reference);
}

TEST(SafetensorsTest, ToTensorRejectsMissingNamesAndNonFloatDtypes) {
  const std::string path = TempPath("to_tensor.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, RoundTripTensors(), {}).ok());
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->HasTensor("matrix"));
  EXPECT_FALSE(file->HasTensor("matri"));
  EXPECT_EQ(file->Find("matri"), nullptr);

  absl::StatusOr<Tensor> missing = ToTensor(*file, "classifier.out_proj.weight");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr(path + ": no tensor named "
                                                           "'classifier.out_proj.weight'"));
  absl::StatusOr<Tensor> integer = ToTensor(*file, "counts");
  EXPECT_EQ(integer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(integer.status().message(), HasSubstr("dtype I64 cannot be converted to F32"));
  EXPECT_THAT(integer.status().message(), HasSubstr("(tensor 'counts')"));

  absl::StatusOr<Tensor> weights = ToTensor(*file, "matrix");
  ASSERT_TRUE(weights.ok()) << weights.status();
  EXPECT_EQ(weights->device(), Device::kCpu);
  EXPECT_EQ(weights->storage()->category(), MemoryCategory::kWeights);
  EXPECT_EQ(weights->shape(), (Shape{2, 3}));
}

// Each writer error leaves neither the target nor the temporary file behind.
void ExpectWriteFails(const std::string& name, const std::vector<NamedTensor>& tensors,
                      const std::map<std::string, std::string>& metadata,
                      const std::string& problem) {
  const std::string path = TempPath(name);
  const absl::Status status = WriteSafetensors(path, tensors, metadata);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(path + ": "));
  EXPECT_THAT(status.message(), HasSubstr(problem));
  EXPECT_FALSE(FileExists(path));
  EXPECT_FALSE(FileExists(path + ".tmp"));
}

TEST(SafetensorsTest, WriterRejectsInvalidInputAndLeavesNoFile) {
  const Tensor one = FloatTensor({1}, DType::kF32, {1});
  ExpectWriteFails("dup.safetensors", {{"a", one}, {"a", one}}, {},
                   "two tensors have this name (tensor 'a')");
  ExpectWriteFails("reserved.safetensors", {{"__metadata__", one}}, {}, "reserved for metadata");
  ExpectWriteFails("undefined.safetensors", {{"a", Tensor()}}, {}, "undefined (tensor 'a')");
  ExpectWriteFails("utf8_name.safetensors", {{"a\xff", one}}, {}, "not valid UTF-8");
  ExpectWriteFails("utf8_meta.safetensors", {{"a", one}}, {{"format", "p\xc0\xaft"}},
                   "metadata value of 'format'");
}

TEST(SafetensorsTest, WriterReportsAnUnwritableDirectoryAndLeavesNoFile) {
  const std::string path = TempPath("no_such_directory/model.safetensors");
  const absl::Status status =
      WriteSafetensors(path, {{"a", FloatTensor({1}, DType::kF32, {1})}}, {});
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(path + ".tmp: cannot create"));
  EXPECT_FALSE(FileExists(path + ".tmp"));
}

TEST(SafetensorsTest, WriterReplacesAnExistingFileWhole) {
  const std::string path = TempPath("replace.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, RoundTripTensors(), {{"format", "pt"}}).ok());
  ASSERT_TRUE(WriteSafetensors(path, {{"only", FloatTensor({1}, DType::kF32, {4})}}, {}).ok());
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->names(), ElementsAre("only"));
  EXPECT_TRUE(file->metadata().empty());
  EXPECT_FALSE(FileExists(path + ".tmp"));
}

TEST(SafetensorsTest, WriterWritesTheViewNotTheWholeStorage) {
  // A parameter living inside a flat buffer: only its own elements are written.
  Tensor flat = FloatTensor({6}, DType::kF32, {0, 1, 2, 3, 4, 5});
  const std::string path = TempPath("view.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"middle", flat.View(2, {2})}}, {}).ok());
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(FloatsOf(*file, "middle"), ElementsAre(2, 3));
}

TEST(SafetensorsTest, WriterWritesElementRangesBackToBack) {
  // A padded flat buffer written packed (the optimizer moments): only the ranges, in the order
  // given, as one 1-D tensor of their total length, next to an ordinary tensor.
  const Tensor flat = FloatTensor({8}, DType::kF32, {0, 1, 2, 3, 4, 5, 6, 7});
  const std::string path = TempPath("ranges.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, {{"packed", flat, {{1, 2}, {4, 0}, {6, 2}}}, {"whole", flat}}, {}).ok());
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(FloatsOf(*file, "packed"), ElementsAre(1, 2, 6, 7));
  EXPECT_THAT(FloatsOf(*file, "whole"), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  ExpectWriteFails("range_outside.safetensors", {{"a", flat, {{6, 3}}}}, {}, "element range [6, 9) outside");
  ExpectWriteFails("range_2d.safetensors", {{"a", FloatTensor({2, 2}, DType::kF32, {1, 2, 3, 4}), {{0, 1}}}}, {},
                   "not 1-D");
}

TEST(SafetensorsTest, MissingFileIsNotFoundAndADirectoryIsRejected) {
  const std::string missing = TempPath("does_not_exist.safetensors");
  absl::StatusOr<SafetensorsFile> file = ReadSafetensors(missing);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(file.status().message(), HasSubstr(missing + ": cannot open"));
  file = ReadSafetensors(::testing::TempDir());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr("not a regular file"));
}

}  // namespace
}  // namespace xlmr::io
