// Fuzz target: the TSV, CSV and JSONL readers on arbitrary bytes (the same bytes as each
// format), with and without required labels and a pair column.
#include <cstddef>
#include <cstdint>

#include "framework/data/record_reader.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xlmr::data::ColumnSpec single;
  xlmr::data::ColumnSpec pair;
  pair.text_pair_column = "text_pair";
  for (const char* name : {"data.tsv", "data.csv", "data.jsonl"}) {
    const std::string path = xlmr::fuzz::WriteInput(name, data, size);
    for (const xlmr::data::ColumnSpec* columns : {&single, &pair}) {
      for (const bool require_label : {true, false}) {
        (void)xlmr::data::ReadRecords(path, *columns, require_label);
      }
    }
  }
  return 0;
}
