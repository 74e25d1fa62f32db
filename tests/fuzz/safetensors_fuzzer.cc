// Fuzz target: the safetensors reader on arbitrary bytes. It must return an error or a
// file whose every tensor converts (ToTensor) without reading outside the file.
#include <cstddef>
#include <cstdint>

#include "framework/io/safetensors.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = xlmr::fuzz::WriteInput("model.safetensors", data, size);
  absl::StatusOr<xlmr::io::SafetensorsFile> file = xlmr::io::ReadSafetensors(path);
  if (!file.ok()) return 0;
  for (const std::string& name : file->names()) {
    absl::StatusOr<xlmr::Tensor> tensor = xlmr::io::ToTensor(*file, name);
    (void)tensor;
  }
  return 0;
}
