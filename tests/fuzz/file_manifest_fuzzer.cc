// Fuzz target: manifest.json (framework/io/file_manifest.h) on arbitrary bytes, verified against
// a directory holding the file a valid manifest names (config.json, "{}\n": 3 bytes, CRC32C
// 0xf01f9d27), so that the checks of listed files run too.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "framework/io/file_manifest.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool written = [] {
    std::ofstream(xlmr::fuzz::ScratchDir() + "/config.json", std::ios::binary) << "{}\n";
    return true;
  }();
  (void)written;
  xlmr::fuzz::WriteInput(xlmr::io::kManifestFileName, data, size);
  (void)xlmr::io::VerifyManifest(xlmr::fuzz::ScratchDir(), {"config.json"});
  (void)xlmr::io::VerifyManifest(xlmr::fuzz::ScratchDir(), {"config.json"}, xlmr::io::ManifestScope::kRequiredOnly);
  return 0;
}
