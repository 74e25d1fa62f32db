// Fatal checks for internal invariants (never for user input: that gets absl::Status).
//
// XLMR_CHECK(cond) << "context";   aborts with file:line, the expression text and the
// streamed message when cond is false. Use for programming errors only: a broken invariant
// means the process cannot continue meaningfully.
#ifndef XLMR_FRAMEWORK_CORE_CHECK_H_
#define XLMR_FRAMEWORK_CORE_CHECK_H_

#include <sstream>
#include <string>

namespace xlmr::internal {

// Collects the streamed message and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* expression);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return message_; }

 private:
  std::ostringstream message_;
};

// Lets `XLMR_CHECK(x) << ...` compile as a void expression in both branches.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace xlmr::internal

#define XLMR_CHECK(condition)                     \
  (condition) ? (void)0                           \
              : ::xlmr::internal::Voidify() &     \
                    ::xlmr::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#define XLMR_CHECK_EQ(a, b) XLMR_CHECK((a) == (b)) << #a " = " << (a) << ", " #b " = " << (b) << " "
#define XLMR_CHECK_LE(a, b) XLMR_CHECK((a) <= (b)) << #a " = " << (a) << ", " #b " = " << (b) << " "
#define XLMR_CHECK_LT(a, b) XLMR_CHECK((a) < (b)) << #a " = " << (a) << ", " #b " = " << (b) << " "

#endif  // XLMR_FRAMEWORK_CORE_CHECK_H_
