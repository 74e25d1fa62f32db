// What trusting a checkpoint costs (bench/results/checkpoint_io.md), on synthesised files of
// XLM-R's sizes in --dir (give it a directory on the disk you train on; it needs 10.5 GB):
//
//   save   an XLM-R base checkpoint (278,043,648 fp32 parameters: model.safetensors 1.11 GB,
//          optimizer.safetensors 2.22 GB, config.json, trainer_state.json, a 5 MB tokenizer
//          stand-in) through SaveTrainingCheckpoint, the production path (write, fsync every
//          file and directory, manifest), against the same bytes written with plain write()s
//          and nothing flushed; and its parts alone: the fsync of the written files, and the
//          manifest (one checksum pass) over files already on disk.
//   verify an XLM-R large checkpoint's model + optimizer files (560,142,336 parameters: 2.24 +
//          4.48 GB = 6.72 GB) against their manifest (io::VerifyManifest, as a resume does),
//          against reading the same files once with read() into a buffer, each from the page
//          cache (warm) and after the files were dropped from it (cold: posix_fadvise
//          DONTNEED, the files being clean). Three rounds, alternating; every time printed.
//
//   bazel run -c opt //bench:checkpoint_io_bench -- --dir=/path/on/the/training/disk
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/core/status_macros.h"
#include "framework/io/durable_file.h"
#include "framework/io/file_manifest.h"
#include "framework/io/safetensors.h"
#include "framework/train/training_checkpoint.h"

ABSL_FLAG(std::string, dir, "/tmp/checkpoint_io_bench", "scratch directory on the disk to measure (emptied)");
ABSL_FLAG(int, rounds, 3, "rounds of each verification measurement");

namespace xlmr {
namespace {
namespace fs = std::filesystem;

constexpr int64_t kBaseParameters = 278043648;   // xlm-roberta-base + a 2-label head
constexpr int64_t kLargeParameters = 560142336;  // xlm-roberta-large + a 2-label head
constexpr size_t kBuffer = size_t{8} << 20;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void Check(const absl::Status& status) { XLMR_CHECK(status.ok()) << status; }

// A tensor of `n` floats whose bytes are not constant (a constant file would not show the
// checksum's cost honestly if some layer compressed or deduplicated).
Tensor Filled(int64_t n, uint32_t seed) {
  Tensor t = Tensor::Zeros({n}, DType::kF32);
  float* data = t.data<float>();
  uint32_t x = seed;
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>((x = x * 1664525u + 1013904223u) >> 8);
  return t;
}

void WriteText(const std::string& path, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  std::string text(bytes, 'x');
  for (size_t i = 0; i < bytes; ++i) text[i] = static_cast<char>('a' + (i * 7919) % 26);
  out << text;
}

// The same bytes a checkpoint holds, with write() only: nothing flushed, no manifest.
void WritePlain(const std::string& path, const Tensor& tensor) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const char* bytes = static_cast<const char*>(tensor.raw_data());
  for (size_t done = 0; done < tensor.bytes();) {
    const ssize_t n = write(fd, bytes + done, std::min(kBuffer, tensor.bytes() - done));
    XLMR_CHECK(n > 0);
    done += static_cast<size_t>(n);
  }
  close(fd);
}

void Drop(const std::string& path) {  // out of the page cache (the file is clean)
  const int fd = open(path.c_str(), O_RDONLY);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

double ReadOnce(const std::vector<std::string>& paths) {
  std::vector<char> buffer(kBuffer);
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& path : paths) {
    const int fd = open(path.c_str(), O_RDONLY);
    while (read(fd, buffer.data(), buffer.size()) > 0) {
    }
    close(fd);
  }
  return Seconds(start);
}

void BenchSave(const std::string& root) {
  std::printf("== save: an XLM-R base checkpoint (%lld parameters)\n", static_cast<long long>(kBaseParameters));
  const Tensor weights = Filled(kBaseParameters, 1), exp_avg = Filled(kBaseParameters, 2),
               exp_avg_sq = Filled(kBaseParameters, 3);
  const std::string out = root + "/save";
  fs::create_directories(out);
  train::TrainingState state;
  state.global_step = 1;
  auto save_model = [&](const std::string& dir) -> absl::StatusOr<std::vector<std::string>> {
    XLMR_RETURN_IF_ERROR(io::WriteSafetensors(dir + "/model.safetensors", {{"w", weights}}, {{"format", "pt"}}));
    WriteText(dir + "/config.json", 1200);
    WriteText(dir + "/sentencepiece.bpe.model", 5069051);
    return std::vector<std::string>{"config.json", "model.safetensors", "sentencepiece.bpe.model"};
  };
  for (int round = 0; round < 2; ++round) {
    fs::remove_all(out + "/checkpoint-1");
    auto start = std::chrono::steady_clock::now();
    Check(train::SaveTrainingCheckpoint(out, state, exp_avg, exp_avg_sq, save_model, 0));
    const double production = Seconds(start);

    const std::string plain = root + "/plain";
    fs::remove_all(plain);
    fs::create_directories(plain);
    start = std::chrono::steady_clock::now();
    WritePlain(plain + "/model.safetensors", weights);
    WritePlain(plain + "/optimizer.safetensors", exp_avg);  // two moments: the same bytes twice
    WritePlain(plain + "/optimizer2.safetensors", exp_avg_sq);
    WriteText(plain + "/config.json", 1200);
    WriteText(plain + "/sentencepiece.bpe.model", 5069051);
    const double written = Seconds(start);
    const std::vector<std::string> files = {"model.safetensors", "optimizer.safetensors", "optimizer2.safetensors",
                                            "config.json", "sentencepiece.bpe.model"};
    start = std::chrono::steady_clock::now();
    for (const std::string& name : files) Check(io::SyncFile(plain + "/" + name));
    Check(io::SyncDirectory(plain));
    const double flushed = Seconds(start);
    start = std::chrono::steady_clock::now();
    Check(io::WriteManifest(plain, files));
    const double manifest = Seconds(start);
    std::printf("round %d: SaveTrainingCheckpoint %.2f s | plain write() %.2f s, then fsync of it all %.2f s, "
                "then the manifest (checksums) %.2f s\n",
                round + 1, production, written, flushed, manifest);
  }
}

void BenchVerify(const std::string& root, int rounds) {
  std::printf("== verify: an XLM-R large checkpoint's model + optimizer files (%lld parameters)\n",
              static_cast<long long>(kLargeParameters));
  const std::string dir = root + "/large";
  fs::create_directories(dir);
  {
    const Tensor weights = Filled(kLargeParameters, 4);
    Check(io::WriteSafetensors(dir + "/model.safetensors", {{"w", weights}}, {{"format", "pt"}}));
    Check(io::WriteSafetensors(dir + "/optimizer.safetensors", {{"exp_avg", weights}, {"exp_avg_sq", Filled(kLargeParameters, 5)}},
                               {{"format", "pt"}}));
  }
  const std::vector<std::string> names = {"model.safetensors", "optimizer.safetensors"};
  Check(io::WriteManifest(dir, names));
  std::vector<std::string> paths;
  double gb = 0;
  for (const std::string& name : names) {
    paths.push_back(dir + "/" + name);
    gb += static_cast<double>(fs::file_size(paths.back())) / 1e9;
  }
  std::printf("%.2f GB in %zu files\n", gb, paths.size());
  for (const bool cold : {true, false}) {
    for (int round = 0; round < rounds; ++round) {
      if (cold) for (const std::string& p : paths) Drop(p);
      const double read_once = ReadOnce(paths);
      if (cold) for (const std::string& p : paths) Drop(p);
      const auto start = std::chrono::steady_clock::now();
      const absl::StatusOr<io::ManifestCheck> check = io::VerifyManifest(dir, names);
      const double verify = Seconds(start);
      XLMR_CHECK(check.ok() && *check == io::ManifestCheck::kVerified) << check.status();
      std::printf("%s round %d: read once %.2f s (%.2f GB/s) | verify %.2f s (%.2f GB/s) | verify / read %.2f\n",
                  cold ? "cold" : "warm", round + 1, read_once, gb / read_once, verify, gb / verify, verify / read_once);
    }
  }
}

}  // namespace
}  // namespace xlmr

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string root = absl::GetFlag(FLAGS_dir);
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  xlmr::BenchSave(root);
  xlmr::BenchVerify(root, absl::GetFlag(FLAGS_rounds));
  std::filesystem::remove_all(root);
  return 0;
}
