// What the GPU micro-benchmarks (gpu_gemm_bench, gpu_attention_bench) share: their command line
// (one line and exit status 2 for a bad flag, as the recipes do), random operands on the GPU, and
// CUDA-event timing on the compute stream.
#ifndef XLMR_BENCH_GPU_BENCH_COMMON_H_
#define XLMR_BENCH_GPU_BENCH_COMMON_H_

#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "framework/tensor/tensor.h"

namespace xlmr::bench {

// Parses the command line with the recipes' parser (an unknown flag or a value that does not
// parse is one line and exit status 2, where Abseil alone exits 1, the benchmarks' no-GPU
// status). Exits on --help and on a bad flag.
void ParseFlagsOrExit(int argc, char** argv, const char* program, const char* description);

// One line on stderr, "<program>: <message>", and exit status 2.
[[noreturn]] void ExitBadFlag(const char* program, const std::string& message);

// --dtype's value: "f16" or "bf16" (ExitBadFlag otherwise).
DType HalfDTypeFlag(const char* program, const std::string& name);

// --repeats >= 1 and --warmup >= 1 (at least one untimed call, so that one-off costs of a first
// call, such as planning or loading a kernel, never land in the timed ones); ExitBadFlag
// otherwise.
void CheckRepeatsAndWarmup(const char* program, int repeats, int warmup);

// A GPU tensor of `shape` with values uniform in [-bound, bound) rounded once to `dtype`.
Tensor RandomOnGpu(const Shape& shape, DType dtype, float bound, std::mt19937& rng);

// Mean milliseconds of one call of `work` (which queues its kernels on the compute stream):
// `warmup` untimed calls, then `repeats` calls between two CUDA events.
double MeanMilliseconds(const std::function<void()>& work, int warmup, int repeats);

// Binds GPU 0 (CudaContext::Init); false, with one line "<program>: no GPU to use: ..." on
// stderr, when there is none.
bool InitGpuOrSay(const char* program);

}  // namespace xlmr::bench

#endif  // XLMR_BENCH_GPU_BENCH_COMMON_H_
