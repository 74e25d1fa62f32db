#include "framework/profile/profile_window.h"

#include "gtest/gtest.h"

namespace xlmr::profile {
namespace {

TEST(ProfileWindowTest, StartEndInclusive) {
  const absl::StatusOr<ProfileWindow> window = ParseProfileWindow("5:7", "profile_steps");
  ASSERT_TRUE(window.ok());
  EXPECT_FALSE(window->Contains(4));
  EXPECT_TRUE(window->Contains(5));
  EXPECT_TRUE(window->Contains(7));
  EXPECT_FALSE(window->Contains(8));
  EXPECT_TRUE(ParseProfileWindow("3:3", "profile_steps")->Contains(3));
}

TEST(ProfileWindowTest, EmptyIsNoWindow) {
  const absl::StatusOr<ProfileWindow> window = ParseProfileWindow("", "profile_steps");
  ASSERT_TRUE(window.ok());
  EXPECT_FALSE(window->enabled());
  EXPECT_FALSE(window->Contains(1));
}

TEST(ProfileWindowTest, RejectsWhatIsNotStartColonEnd) {
  for (const char* bad : {"7:5", "0:2", "-1:2", "5", "5:", ":5", "a:b", "1:2:3", "1.5:2"}) {
    const absl::StatusOr<ProfileWindow> window = ParseProfileWindow(bad, "profile_steps");
    ASSERT_FALSE(window.ok()) << bad;
    EXPECT_EQ(window.status().message(),
              std::string("--profile_steps: expected START:END with 1 <= START <= END (e.g. 5:7), got ") + bad);
  }
}

}  // namespace
}  // namespace xlmr::profile
