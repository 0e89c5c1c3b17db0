#include "libfarm/nvcc/module_id.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

// Ids cudafe++ 13.0 wrote (source paths in /tmp/n27/var).
TEST(ModuleIdTest, OnlyAHashAndCudafesPidAtTheEndIsPerProcess) {
  EXPECT_TRUE(IsPerProcessModuleId("_8323bfcd_16_f_static_only_cu_79deedf5_16171", 16171));
  // Another process's id is not this run's pid: nothing to conclude.
  EXPECT_FALSE(IsPerProcessModuleId("_8323bfcd_16_f_static_only_cu_79deedf5_16171", 16172));
  // The first external definition's name, hashed or as it is.
  EXPECT_FALSE(IsPerProcessModuleId("_e8655e95_14_a_extkernel_cu_b3df202c", 202));
  EXPECT_FALSE(IsPerProcessModuleId("_1f0854c3_11_b_extvar_cu_ext_var", 1));
  // A C name that looks like a hash and a number is still a name unless it is the pid.
  EXPECT_FALSE(IsPerProcessModuleId("_ff47bfae_12_e_externc_cu_deadbeef_42", 41));
  // The file name is skipped by its length, whatever it holds.
  EXPECT_TRUE(IsPerProcessModuleId("_0f2a3260_14_a_cu_0123_1_cu_b6d4c026_5052", 5052));
  EXPECT_FALSE(IsPerProcessModuleId("not a module id", 5052));
  EXPECT_FALSE(IsPerProcessModuleId("_0f2a3260_99_short_cu_b6d4c026_5052", 5052));
}

TEST(ModuleIdTest, OfInputsKeepsNvccsPathHashAndName) {
  EXPECT_EQ(ModuleIdOfInputs("_819efa17_12_only_anon_cu_69d7eca1_4111",
                             "0123456789abcdef0123456789abcdef"),
            "_819efa17_12_only_anon_cu_farm0123456789abcdef");
}

}  // namespace
}  // namespace farm
