// Fuzz target: config.json (models/encoder/config.h) on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "models/encoder/config.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)xlmr::models::LoadEncoderConfig(xlmr::fuzz::WriteInput("config.json", data, size));
  return 0;
}
