// Token cache: build once then reuse without tokenizing; every input of the key causes a
// miss; corrupted, truncated or foreign files are rebuilt; writes are atomic.
#include "framework/data/token_cache.h"

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/framework/data/temp_files.h"

namespace xlmr::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ReadFileBytes;
using testing::WriteTempFile;

// A stand-in tokenizer that counts its calls: <s>=0, one id per byte (byte + 4), </s>=2, the
// pair as </s></s> pair </s> (XLM-R's layout), truncated to max_length keeping the last </s>.
struct CountingTokenizer {
  int max_length = 8;
  int calls = 0;

  TokenizeFn Fn() {
    return [this](const std::string& text, const std::optional<std::string>& pair) {
      ++calls;
      std::vector<int32_t> ids{0};
      for (unsigned char c : text) ids.push_back(c + 4);
      ids.push_back(2);
      if (pair) {
        ids.push_back(2);
        for (unsigned char c : *pair) ids.push_back(c + 4);
        ids.push_back(2);
      }
      if (static_cast<int>(ids.size()) > max_length) {
        ids.resize(max_length);
        ids.back() = 2;
      }
      return ids;
    };
  }
};

// A fresh, empty cache directory per test.
std::string CacheDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "cache_" + info->name();
}

TokenCacheSpec SpecFor(const std::string& data_path, int max_length = 8) {
  TokenCacheSpec spec;
  spec.data_path = data_path;
  spec.tokenizer_fingerprint = "spm-0123";
  spec.max_length = max_length;
  return spec;
}

std::vector<std::vector<int32_t>> AllExamples(const TokenizedDataset& dataset) {
  std::vector<std::vector<int32_t>> examples;
  for (int64_t i = 0; i < dataset.size(); ++i) {
    examples.emplace_back(dataset.example(i).begin(), dataset.example(i).end());
  }
  return examples;
}

std::vector<std::string> FilesIn(const std::string& directory) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(directory.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
  }
  return names;
}

ino_t InodeOf(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
  return info.st_ino;
}

// Overwrites `count` bytes at `offset` of `path` with 0x5A, in place.
void Scribble(const std::string& path, size_t offset, size_t count) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset));
  file << std::string(count, '\x5A');
}

const char kData[] = "text\tlabel\nab\tpos\n\nabcdefghij\tneg\nc\tpos\n";

TEST(TokenCacheTest, SecondLoadReusesTheCacheWithoutTokenizing) {
  const std::string data = WriteTempFile("reuse.tsv", kData);
  CountingTokenizer tokenizer;
  TokenCacheOutcome first;
  absl::StatusOr<TokenizedDataset> built =
      LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn(), &first);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_FALSE(first.hit);
  EXPECT_EQ(first.miss_reason, "");
  EXPECT_EQ(tokenizer.calls, 3);
  ASSERT_EQ(built->size(), 3);
  EXPECT_THAT(built->example(0), ElementsAre(0, 'a' + 4, 'b' + 4, 2));
  EXPECT_EQ(built->num_tokens(1), 8);  // truncated to max_length
  EXPECT_EQ(built->line(1), 4);
  EXPECT_THAT(built->label_names(), ElementsAre("neg", "pos"));
  EXPECT_EQ(built->label_name(1), "neg");
  EXPECT_EQ(built->file(), data);

  TokenCacheOutcome second;
  absl::StatusOr<TokenizedDataset> reused =
      LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn(), &second);
  ASSERT_TRUE(reused.ok()) << reused.status();
  EXPECT_TRUE(second.hit);
  EXPECT_EQ(second.path, first.path);
  EXPECT_EQ(tokenizer.calls, 3);  // not called again
  EXPECT_EQ(AllExamples(*reused), AllExamples(*built));
  EXPECT_EQ(reused->label_names(), built->label_names());
  for (int64_t i = 0; i < reused->size(); ++i) {
    EXPECT_EQ(reused->line(i), built->line(i));
    EXPECT_EQ(reused->label_name(i), built->label_name(i));
  }
}

TEST(TokenCacheTest, ReadsNothingOnAHitEvenWhenTheRecordsWouldFail) {
  // The key depends only on the bytes, so a hit never needs the records: prove it by
  // building through the low-level calls from records that differ from the file's content.
  const std::string data = WriteTempFile("hit_only.tsv", kData);
  absl::StatusOr<uint64_t> key = ComputeTokenCacheKey(SpecFor(data));
  ASSERT_TRUE(key.ok()) << key.status();
  const std::string path = TokenCachePath(CacheDir(), data, *key);
  EXPECT_TRUE(absl::IsNotFound(OpenTokenCache(path, *key, data).status()));
  Record record;
  record.text = "zz";
  record.label = "only";
  record.line = 9;
  CountingTokenizer tokenizer;
  ASSERT_TRUE(BuildTokenCache(path, *key, data, {record}, 8, tokenizer.Fn()).ok());
  absl::StatusOr<TokenizedDataset> opened = OpenTokenCache(path, *key, data);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->size(), 1);
  EXPECT_EQ(opened->line(0), 9);
}

TEST(TokenCacheTest, EveryKeyInputCausesAMiss) {
  const std::string data = WriteTempFile("key.tsv", kData);
  absl::StatusOr<uint64_t> base = ComputeTokenCacheKey(SpecFor(data));
  ASSERT_TRUE(base.ok()) << base.status();
  std::vector<TokenCacheSpec> changed(6, SpecFor(data));
  changed[0].max_length = 16;
  changed[1].tokenizer_fingerprint = "spm-4567";
  changed[2].columns.text_column = "label";
  changed[3].columns.label_column = "text";
  changed[4].columns.text_pair_column = "label";
  changed[5].require_label = false;
  for (size_t i = 0; i < changed.size(); ++i) {
    absl::StatusOr<uint64_t> key = ComputeTokenCacheKey(changed[i]);
    ASSERT_TRUE(key.ok()) << key.status();
    EXPECT_NE(*key, *base) << "change " << i;
  }
  // The same bytes under another name share the key; other bytes do not.
  const std::string copy = WriteTempFile("key_copy.tsv", kData);
  EXPECT_EQ(*ComputeTokenCacheKey(SpecFor(copy)), *base);
  const std::string as_csv = WriteTempFile("key.csv", kData);
  EXPECT_NE(*ComputeTokenCacheKey(SpecFor(as_csv)), *base);  // same bytes, other format
  WriteTempFile("key.tsv", std::string(kData) + "d\tneg\n");
  EXPECT_NE(*ComputeTokenCacheKey(SpecFor(data)), *base);
}

TEST(TokenCacheTest, ChangedDataFileOrMaxLengthIsRetokenized) {
  const std::string data = WriteTempFile("changing.tsv", kData);
  CountingTokenizer tokenizer;
  ASSERT_TRUE(LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn()).ok());
  EXPECT_EQ(tokenizer.calls, 3);

  WriteTempFile("changing.tsv", std::string(kData) + "d\tneg\n");
  absl::StatusOr<TokenizedDataset> grown =
      LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn());
  ASSERT_TRUE(grown.ok()) << grown.status();
  EXPECT_EQ(tokenizer.calls, 3 + 4);
  EXPECT_EQ(grown->size(), 4);

  tokenizer.max_length = 16;
  absl::StatusOr<TokenizedDataset> longer =
      LoadOrBuildTokenCache(SpecFor(data, 16), CacheDir(), tokenizer.Fn());
  ASSERT_TRUE(longer.ok()) << longer.status();
  EXPECT_EQ(tokenizer.calls, 3 + 4 + 4);
  EXPECT_EQ(longer->num_tokens(1), 12);  // <s> + 10 bytes + </s>, no longer truncated
}

// Builds a cache, damages its file with `damage`, and expects the next load to notice (with
// `reason` in the outcome), rebuild, and then hit again.
void ExpectRebuiltAfter(const std::string& name,
                        const std::function<void(const std::string&)>& damage,
                        const std::string& reason) {
  const std::string data = WriteTempFile(name + ".tsv", kData);
  CountingTokenizer tokenizer;
  TokenCacheOutcome outcome;
  ASSERT_TRUE(LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn(), &outcome).ok());
  damage(outcome.path);
  absl::StatusOr<TokenizedDataset> rebuilt =
      LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn(), &outcome);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_FALSE(outcome.hit);
  EXPECT_THAT(outcome.miss_reason, HasSubstr(reason));
  EXPECT_EQ(tokenizer.calls, 6);
  EXPECT_THAT(rebuilt->example(0), ElementsAre(0, 'a' + 4, 'b' + 4, 2));
  ASSERT_TRUE(LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn(), &outcome).ok());
  EXPECT_TRUE(outcome.hit);
  EXPECT_EQ(tokenizer.calls, 6);
}

TEST(TokenCacheTest, CorruptedPayloadIsRebuilt) {
  // The last bytes are label-name text, the bytes before them label indices and tokens.
  ExpectRebuiltAfter(
      "corrupt",
      [](const std::string& path) { Scribble(path, ReadFileBytes(path).size() - 20, 3); },
      "checksum mismatch");
}

TEST(TokenCacheTest, TruncatedFileIsRebuilt) {
  ExpectRebuiltAfter(
      "truncated",
      [](const std::string& path) {
        const std::string bytes = ReadFileBytes(path);
        std::ofstream(path, std::ios::binary | std::ios::trunc)
            << bytes.substr(0, bytes.size() - 4);
      },
      "the header implies");
  ExpectRebuiltAfter(
      "tiny",
      [](const std::string& path) {
        std::ofstream(path, std::ios::binary | std::ios::trunc) << "XLMR";
      },
      "shorter than its header");
}

TEST(TokenCacheTest, BadMagicVersionOrKeyIsRebuilt) {
  ExpectRebuiltAfter(
      "magic", [](const std::string& path) { Scribble(path, 0, 1); }, "bad magic");
  ExpectRebuiltAfter(
      "version", [](const std::string& path) { Scribble(path, 8, 1); }, "format version");
  ExpectRebuiltAfter(
      "key", [](const std::string& path) { Scribble(path, 16, 2); }, "written for another key");
}

TEST(TokenCacheTest, RebuildReplacesTheFileAtomically) {
  const std::string data = WriteTempFile("atomic.tsv", kData);
  CountingTokenizer tokenizer;
  TokenCacheOutcome outcome;
  absl::StatusOr<TokenizedDataset> old =
      LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn(), &outcome);
  ASSERT_TRUE(old.ok()) << old.status();
  const ino_t old_inode = InodeOf(outcome.path);
  absl::StatusOr<uint64_t> key = ComputeTokenCacheKey(SpecFor(data));
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(BuildTokenCache(outcome.path, *key, data, {}, 8, tokenizer.Fn()).ok());
  // A new file was renamed over the old one (never rewritten in place), so the dataset still
  // mapped from the old file keeps its contents, and no temporary file is left behind.
  EXPECT_NE(InodeOf(outcome.path), old_inode);
  EXPECT_THAT(old->example(0), ElementsAre(0, 'a' + 4, 'b' + 4, 2));
  EXPECT_EQ(FilesIn(CacheDir()).size(), 1u);
}

TEST(TokenCacheTest, UnwritableCacheIsAnErrorAndLeavesNoTemporaryFile) {
  const std::string data = WriteTempFile("unwritable.tsv", kData);
  CountingTokenizer tokenizer;
  // The cache path is taken by a directory: the rename must fail.
  absl::StatusOr<uint64_t> key = ComputeTokenCacheKey(SpecFor(data));
  ASSERT_TRUE(key.ok());
  const std::string path = TokenCachePath(CacheDir(), data, *key);
  ASSERT_EQ(mkdir(CacheDir().c_str(), 0755), 0);
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  WriteTempFile("cache_UnwritableCacheIsAnErrorAndLeavesNoTemporaryFile/" +
                    path.substr(path.rfind('/') + 1) + "/occupied",
                "x");
  absl::StatusOr<TokenizedDataset> result =
      LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              HasSubstr("cannot write the token cache for " + data + ": cannot rename"));
  EXPECT_EQ(FilesIn(CacheDir()).size(), 1u);  // only the blocking directory

  // A cache directory below a regular file cannot be created.
  const std::string file = WriteTempFile("not_a_directory", "x");
  absl::StatusOr<TokenizedDataset> blocked =
      LoadOrBuildTokenCache(SpecFor(data), file + "/cache", tokenizer.Fn());
  ASSERT_FALSE(blocked.ok());
  EXPECT_THAT(blocked.status().message(), HasSubstr("cannot create"));
}

TEST(TokenCacheTest, UnlabelledRecordsKeepNoLabel) {
  const std::string data =
      WriteTempFile("predict.jsonl", "{\"text\": \"a\"}\n{\"text\": \"b\", \"label\": 1}\n");
  TokenCacheSpec spec = SpecFor(data);
  spec.require_label = false;
  CountingTokenizer tokenizer;
  absl::StatusOr<TokenizedDataset> dataset =
      LoadOrBuildTokenCache(spec, CacheDir(), tokenizer.Fn());
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  EXPECT_EQ(dataset->label_name(0), std::nullopt);
  EXPECT_EQ(dataset->label_name(1), "1");
  absl::StatusOr<LabelMap> map = LabelMap::FromTrainingLabels({"0", "1"}, "train.jsonl");
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(dataset->AssignLabelIds(*map).message(), data + ":1: missing label (--label_column)");
}

TEST(TokenCacheTest, ReadErrorsPassThrough) {
  const std::string data = WriteTempFile("bad_rows.tsv", "text\tlabel\na\tb\tc\n");
  CountingTokenizer tokenizer;
  absl::StatusOr<TokenizedDataset> dataset =
      LoadOrBuildTokenCache(SpecFor(data), CacheDir(), tokenizer.Fn());
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().message(), data + ":2: expected 2 tab-separated fields, found 3");
  EXPECT_FALSE(
      LoadOrBuildTokenCache(SpecFor(data + ".missing.tsv"), CacheDir(), tokenizer.Fn()).ok());
}

TEST(TokenCacheDeathTest, TokenizerLongerThanMaxLengthIsAProgrammingError) {
  Record record;
  record.text = "abcdef";
  record.line = 2;
  CountingTokenizer tokenizer;
  tokenizer.max_length = 100;
  EXPECT_DEATH(TokenizeRecords({record}, 4, tokenizer.Fn()), "returned 8 ids for line 2");
}

}  // namespace
}  // namespace xlmr::data
