// Fuzz target: config.json (models/xlmr/config.h) on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "models/xlmr/config.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)xlmr::models::LoadXlmrConfig(xlmr::fuzz::WriteInput("config.json", data, size));
  return 0;
}
