// The main() of every test binary. ctest runs a binary once per group of cases
// (tests/cmake/add_gtest_groups.cmake); a group whose cases all skipped themselves (a CUDA test on a
// machine without a GPU) exits with 77, which ctest reports as skipped (SKIP_RETURN_CODE), while a
// group in which anything failed still fails and one in which anything passed still passes.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  if (status == 0 && unit.successful_test_count() == 0 && unit.skipped_test_count() > 0) return 77;
  return status;
}
