// A Recording as Chrome trace JSON (the "JSON Object Format" of the Trace Event Format), which
// Perfetto (ui.perfetto.dev) and chrome://tracing open: one track per host thread (steps, the
// model's scopes and its ops nested in them) and one per device stream (each kernel or copy
// named after the op that issued it, "layer.3.attention.fwd ops::Linear", the kernel's own name
// in its arguments). Times are microseconds from the recording's first event.
#ifndef XLMR_FRAMEWORK_PROFILE_CHROME_TRACE_H_
#define XLMR_FRAMEWORK_PROFILE_CHROME_TRACE_H_

#include <string>

#include "framework/profile/profiler.h"
#include "nlohmann/json.hpp"

namespace xlmr::profile {

// `process_name` names the host process track ("xlmr_finetune").
nlohmann::json ChromeTrace(const Recording& recording, const std::string& process_name);

}  // namespace xlmr::profile

#endif  // XLMR_FRAMEWORK_PROFILE_CHROME_TRACE_H_
