#include "bench/gpu_bench_common.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"
#include "recipes/command_line.h"
#include "recipes/program_usage.h"

namespace xlmr::bench {

void ParseFlagsOrExit(int argc, char** argv, const char* program, const char* description) {
  recipes::ConfigureUsage(argv[0], description);
  if (const std::optional<int> status = recipes::ParseCommandLineOrStop(argc, argv, program, nullptr)) {
    std::exit(*status);
  }
}

void ExitBadFlag(const char* program, const std::string& message) {
  std::cerr << program << ": " << message << "\n";
  std::exit(2);
}

DType HalfDTypeFlag(const char* program, const std::string& name) {
  if (name == "f16") return DType::kF16;
  if (name == "bf16") return DType::kBF16;
  ExitBadFlag(program, "--dtype=" + name + ": must be f16 or bf16");
}

void CheckRepeatsAndWarmup(const char* program, int repeats, int warmup) {
  if (repeats < 1) ExitBadFlag(program, "--repeats=" + std::to_string(repeats) + ": must be at least 1");
  if (warmup < 1) ExitBadFlag(program, "--warmup=" + std::to_string(warmup) + ": must be at least 1");
}

Tensor RandomOnGpu(const Shape& shape, DType dtype, float bound, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-bound, bound);
  std::vector<float> values(static_cast<size_t>(NumElements(shape)));
  for (float& v : values) v = uniform(rng);
  Tensor host = Tensor::Zeros(shape, dtype, Device::kCpu);
  host.CopyFromFloats(values);
  return host.ToDevice(Device::kCuda);
}

double MeanMilliseconds(const std::function<void()>& work, int warmup, int repeats) {
  cudaStream_t stream = kernels::cuda::CudaContext::Current().compute_stream();
  for (int i = 0; i < warmup; ++i) work();
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < repeats; ++i) work();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float total = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&total, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return static_cast<double>(total) / repeats;
}

bool InitGpuOrSay(const char* program) {
  const auto context = kernels::cuda::CudaContext::Init(0);
  if (context.ok()) return true;
  std::cerr << program << ": no GPU to use: " << context.status().message() << "\n";
  return false;
}

}  // namespace xlmr::bench
