// compare_models A.safetensors B.safetensors [--tolerance=T] [--relative_floor=F]
//
// Compares two safetensors files tensor by tensor (same names, shapes; values widened to f32)
// and prints, for the whole file, the largest absolute difference and the largest relative
// difference |a - b| / max(|a|, |b|, F), each with the tensor and element where it occurs.
// Exit status: 0 when the largest absolute difference is <= T (default 0: bitwise equal
// values), 1 when it is above T, 2 when the files cannot be read or do not have the same
// tensors. Used by tests/recipes/data_parallel_test.sh to compare the models written by one
// process and by two ranks under mpirun.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "framework/io/safetensors.h"

namespace xlmr {
namespace {

struct Worst {
  double value = 0;
  std::string where = "(none)";
};

struct Options {
  std::string a, b;
  double tolerance = 0;
  double relative_floor = 1e-6;
};

bool ParseArgs(int argc, char** argv, Options& options) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--tolerance=")) {
      if (!absl::SimpleAtod(arg.substr(12), &options.tolerance)) return false;
    } else if (absl::StartsWith(arg, "--relative_floor=")) {
      if (!absl::SimpleAtod(arg.substr(17), &options.relative_floor)) return false;
    } else {
      files.push_back(arg);
    }
  }
  if (files.size() != 2) return false;
  options.a = files[0];
  options.b = files[1];
  return true;
}

int Compare(const Options& options) {
  absl::StatusOr<io::SafetensorsFile> a = io::ReadSafetensors(options.a);
  absl::StatusOr<io::SafetensorsFile> b = io::ReadSafetensors(options.b);
  for (const auto* file : {&a, &b}) {
    if (!file->ok()) {
      std::fprintf(stderr, "compare_models: %s\n", std::string(file->status().message()).c_str());
      return 2;
    }
  }
  if (a->names().size() != b->names().size()) {
    std::fprintf(stderr, "compare_models: %zu tensors in %s, %zu in %s\n", a->names().size(),
                 options.a.c_str(), b->names().size(), options.b.c_str());
    return 2;
  }
  Worst absolute, relative;
  int64_t elements = 0;
  for (const std::string& name : a->names()) {
    absl::StatusOr<Tensor> ta = io::ToTensor(*a, name);
    absl::StatusOr<Tensor> tb = io::ToTensor(*b, name);
    if (!ta.ok() || !tb.ok() || ta->shape() != tb->shape()) {
      std::fprintf(stderr, "compare_models: tensor '%s' missing, unreadable or of another shape in %s\n",
                   name.c_str(), options.b.c_str());
      return 2;
    }
    const std::vector<float> va = ta->ToFloatVector(), vb = tb->ToFloatVector();
    for (size_t i = 0; i < va.size(); ++i) {
      const double x = va[i], y = vb[i], difference = std::fabs(x - y);
      const double scaled = difference / std::max({std::fabs(x), std::fabs(y), options.relative_floor});
      // NaN anywhere counts as an infinite difference.
      const double d = std::isnan(difference) ? INFINITY : difference;
      if (d > absolute.value) absolute = {d, name + "[" + std::to_string(i) + "]"};
      if (std::isnan(scaled) || scaled > relative.value) {
        relative = {std::isnan(scaled) ? INFINITY : scaled, name + "[" + std::to_string(i) + "]"};
      }
    }
    elements += static_cast<int64_t>(va.size());
  }
  std::printf("compared %zu tensors, %lld values: max abs diff %.3g at %s; max rel diff %.3g at %s\n",
              a->names().size(), static_cast<long long>(elements), absolute.value, absolute.where.c_str(),
              relative.value, relative.where.c_str());
  if (absolute.value > options.tolerance) {
    std::printf("FAILED: max abs diff %.3g is above the tolerance %.3g\n", absolute.value, options.tolerance);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace xlmr

int main(int argc, char** argv) {
  xlmr::Options options;
  if (!xlmr::ParseArgs(argc, argv, options)) {
    std::fprintf(stderr, "usage: compare_models A.safetensors B.safetensors [--tolerance=T] [--relative_floor=F]\n");
    return 2;
  }
  return xlmr::Compare(options);
}
