// manifest.json: written over the files given, verified against them. Every single-bit flip of
// any file and of the manifest itself, and a truncation, must be reported naming the file; a
// directory without a manifest is reported as such (checkpoints written before manifests).
#include "framework/io/file_manifest.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace xlmr::io {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteAll(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// A directory with three files and its manifest.
std::string SealedDirectory(const std::string& name) {
  const std::string dir = std::string(::testing::TempDir()) + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  WriteAll(dir + "/config.json", "{\"hidden_size\": 32}\n");
  WriteAll(dir + "/model.safetensors", std::string(1000, '\x5a'));
  WriteAll(dir + "/trainer_state.json", "{\"global_step\": 8}\n");
  EXPECT_TRUE(WriteManifest(dir, {"config.json", "model.safetensors", "trainer_state.json"}).ok());
  return dir;
}

const std::vector<std::string> kRequired = {"config.json", "model.safetensors", "trainer_state.json"};

TEST(FileManifestTest, VerifiesWhatItWrote) {
  const std::string dir = SealedDirectory("good");
  EXPECT_FALSE(fs::exists(dir + "/manifest.json.tmp"));
  const absl::StatusOr<ManifestCheck> check = VerifyManifest(dir, kRequired);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(*check, ManifestCheck::kVerified);
}

// sentence-transformers' module configs live in subdirectories (1_Pooling/config.json).
TEST(FileManifestTest, VerifiesFilesInSubdirectories) {
  const std::string dir = std::string(::testing::TempDir()) + "/subdirectory";
  fs::remove_all(dir);
  fs::create_directories(dir + "/1_Pooling");
  WriteAll(dir + "/1_Pooling/config.json", "{\"pooling_mode_mean_tokens\": true}\n");
  ASSERT_TRUE(WriteManifest(dir, {"1_Pooling/config.json"}).ok());
  absl::StatusOr<ManifestCheck> check = VerifyManifest(dir, {"1_Pooling/config.json"});
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(*check, ManifestCheck::kVerified);
  WriteAll(dir + "/1_Pooling/config.json", "{\"pooling_mode_mean_tokens\": fals}\n");
  check = VerifyManifest(dir, {"1_Pooling/config.json"});
  ASSERT_FALSE(check.ok());
  EXPECT_TRUE(absl::IsDataLoss(check.status())) << check.status();
}

TEST(FileManifestTest, NoManifestIsReportedNotFailed) {
  const std::string dir = SealedDirectory("legacy");
  fs::remove(dir + "/manifest.json");
  const absl::StatusOr<ManifestCheck> check = VerifyManifest(dir, kRequired);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(*check, ManifestCheck::kNoManifest);
}

// Every bit of every listed file, one at a time: CRC32C detects any single-bit error.
TEST(FileManifestTest, EverySingleBitFlipOfAFileIsNamed) {
  const std::string dir = SealedDirectory("flips");
  for (const std::string& name : {std::string("config.json"), std::string("trainer_state.json")}) {
    const std::string path = dir + "/" + name;
    const std::string good = ReadAll(path);
    for (size_t byte = 0; byte < good.size(); ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string bad = good;
        bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
        WriteAll(path, bad);
        const absl::StatusOr<ManifestCheck> check = VerifyManifest(dir, kRequired);
        ASSERT_FALSE(check.ok()) << name << " byte " << byte << " bit " << bit;
        EXPECT_TRUE(absl::IsDataLoss(check.status()));
        EXPECT_NE(check.status().message().find(path + ": CRC32C"), std::string::npos) << check.status();
      }
    }
    WriteAll(path, good);
  }
  EXPECT_TRUE(VerifyManifest(dir, kRequired).ok());
}

TEST(FileManifestTest, TruncationAndMissingFilesAreNamed) {
  const std::string dir = SealedDirectory("truncated");
  fs::resize_file(dir + "/model.safetensors", 999);
  absl::StatusOr<ManifestCheck> check = VerifyManifest(dir, kRequired);
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.status().message(), dir + "/model.safetensors: 999 bytes, manifest.json recorded 1000 (truncated)");
  fs::remove(dir + "/model.safetensors");
  check = VerifyManifest(dir, kRequired);
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.status().message(), dir + "/model.safetensors: missing (listed in manifest.json)");
}

// A file the reader needs but the manifest does not list is an error, not a silent pass.
TEST(FileManifestTest, ARequiredFileMustBeListed) {
  const std::string dir = SealedDirectory("unlisted");
  ASSERT_TRUE(WriteManifest(dir, {"config.json", "model.safetensors"}).ok());
  const absl::StatusOr<ManifestCheck> check = VerifyManifest(dir, kRequired);
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.status().message(), dir + "/manifest.json: does not list trainer_state.json");
}

// kRequiredOnly leaves the other listed files alone (a model load does not read the moments).
TEST(FileManifestTest, RequiredOnlyScope) {
  const std::string dir = SealedDirectory("scope");
  WriteAll(dir + "/trainer_state.json", "changed");
  EXPECT_TRUE(VerifyManifest(dir, {"config.json", "model.safetensors"}, ManifestScope::kRequiredOnly).ok());
  EXPECT_FALSE(VerifyManifest(dir, {"config.json", "model.safetensors"}).ok());
}

// Every single-bit flip of manifest.json itself is caught: strict parsing (integers, exact
// keys, known names) leaves no flip that still reads as the same manifest.
TEST(FileManifestTest, EverySingleBitFlipOfTheManifestIsCaught) {
  const std::string dir = SealedDirectory("manifest_flips");
  const std::string path = dir + "/manifest.json";
  const std::string good = ReadAll(path);
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      WriteAll(path, bad);
      const absl::StatusOr<ManifestCheck> check = VerifyManifest(dir, kRequired);
      ASSERT_FALSE(check.ok()) << "byte " << byte << " bit " << bit << ": " << bad;
      EXPECT_TRUE(absl::IsDataLoss(check.status()));
      EXPECT_EQ(check.status().message().rfind(dir + "/", 0), 0u) << check.status();
    }
  }
}

TEST(FileManifestTest, MalformedManifests) {
  const std::string dir = SealedDirectory("malformed");
  const std::string path = dir + "/manifest.json";
  const std::string head = R"({"format": "xlmr_trainer.manifest", "version": 1, "checksum": "crc32c", "files": )";
  for (const std::string& text : std::vector<std::string>{
           std::string(""), std::string("[]"), head + "{}}",
           head + R"([{"name": "../config.json", "size": 1, "crc32c": 1}]})",
           head + R"([{"name": "/config.json", "size": 1, "crc32c": 1}]})",
           head + R"([{"name": "1_Pooling//config.json", "size": 1, "crc32c": 1}]})",
           head + R"([{"name": "1_Pooling/../../config.json", "size": 1, "crc32c": 1}]})",
           head + R"([{"name": "config\njson", "size": 1, "crc32c": 1}]})",
           head + R"([{"name": "config.json", "size": 1, "crc32c": 4294967296}]})",
           head + R"([{"name": "config.json", "size": -1, "crc32c": 1}]})",
           head + R"([{"name": "config.json", "size": 1, "crc32c": "0x1"}]})",
           head + R"([{"name": "config.json", "size": 1, "crc32c": 1, "extra": 0}]})",
           head + R"([{"name": "a", "size": 1, "crc32c": 1}, {"name": "a", "size": 1, "crc32c": 1}]})",
           std::string(R"({"format": "xlmr_trainer.manifest", "version": 2, "checksum": "crc32c", "files": []})")}) {
    WriteAll(path, text);
    const absl::StatusOr<ManifestCheck> check = VerifyManifest(dir, {});
    ASSERT_FALSE(check.ok()) << text;
    EXPECT_TRUE(absl::IsDataLoss(check.status())) << check.status();
    EXPECT_EQ(check.status().message().rfind(path + ": ", 0), 0u) << check.status();
    EXPECT_EQ(check.status().message().find('\n'), std::string::npos) << "not one line: " << check.status();
  }
}

}  // namespace
}  // namespace xlmr::io
