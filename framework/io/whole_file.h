// Reading a whole file into memory: the data readers' input files, the tokenizer files a
// saved model directory copies.
#ifndef XLMR_FRAMEWORK_IO_WHOLE_FILE_H_
#define XLMR_FRAMEWORK_IO_WHOLE_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace xlmr::io {

// The file's bytes. Errors: NotFound when it cannot be opened, DataLoss on a read error; both
// name the file and the system's reason.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace xlmr::io

#endif  // XLMR_FRAMEWORK_IO_WHOLE_FILE_H_
