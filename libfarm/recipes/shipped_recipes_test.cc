// Every recipe shipped in recipes/ must load: a broken recipe fails CI, not a user's build.
#include <gtest/gtest.h>

#include "libfarm/recipes/arch_plan.h"
#include "libfarm/recipes/build_render.h"
#include "libfarm/recipes/prerequisite.h"
#include "libfarm/recipes/recipe_loader.h"

namespace farm {
namespace {

TEST(ShippedRecipesTest, EveryFileLoads) {
  auto dir = LoadRecipeDirectory(FARM_SOURCE_RECIPES_DIR);
  ASSERT_TRUE(dir.ok()) << dir.status();
  for (const absl::Status& e : dir->errors) ADD_FAILURE() << e;
  std::vector<std::string> names;
  for (const Recipe& r : dir->recipes) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"bitsandbytes", "deepspeed", "demo", "flash-attn",
                                             "pytorch", "torchaudio", "torchvision", "xformers"}));
}

// Each recipe's arch list reaches the package in the form it reads, filled with the planned
// list (what the package can build), not the requested one.
TEST(ShippedRecipesTest, EachPackageGetsThePlannedArchsInItsOwnForm) {
  auto dir = LoadRecipeDirectory(FARM_SOURCE_RECIPES_DIR);
  ASSERT_TRUE(dir.ok()) << dir.status();
  auto rendered = [&](const std::string& name, const std::string& archs) {
    for (const Recipe& r : dir->recipes) {
      if (r.name != name) continue;
      auto plan = PlanArchs(r, *ParseArchList(archs));
      EXPECT_TRUE(plan.ok()) << name << ": " << plan.status();
      if (!plan.ok()) return RenderedBuild{};
      BuildValues values{plan->planned, {13, 0}, "/usr/local/cuda", 4, 8, "1.0"};
      auto out = RenderBuild(r, values, [](const std::string&) { return std::nullopt; });
      EXPECT_TRUE(out.ok()) << out.status();
      return out.ok() ? *out : RenderedBuild{};
    }
    ADD_FAILURE() << "no recipe " << name;
    return RenderedBuild{};
  };
  auto has = [](const RenderedBuild& b, const std::string& env) {
    return std::find(b.env.begin(), b.env.end(), env) != b.env.end();
  };
  // flash-attn: 12.1 is served by sm_120 SASS; FLASH_ATTN_CUDA_ARCHS takes "90;120".
  RenderedBuild fa = rendered("flash-attn", "9.0;12.1");
  EXPECT_TRUE(has(fa, "FLASH_ATTN_CUDA_ARCHS=90;120"));
  EXPECT_TRUE(has(fa, "FLASH_ATTENTION_FORCE_BUILD=TRUE"));
  EXPECT_TRUE(has(fa, "NVCC_THREADS=2"));
  EXPECT_TRUE(has(rendered("torchvision", "7.5;9.0;12.1"), "TORCH_CUDA_ARCH_LIST=7.5;9.0;12.1"));
  EXPECT_TRUE(has(rendered("torchvision", "12.1"), "FORCE_CUDA=1"));
  EXPECT_TRUE(has(rendered("xformers", "12.1"), "TORCH_CUDA_ARCH_LIST=12.1"));
  EXPECT_TRUE(has(rendered("deepspeed", "9.0;12.1"), "DS_BUILD_OPS=1"));
  // Only cpp_extension's ninja path runs $PYTORCH_NVCC (farm-nvcc); DeepSpeed's default
  // (distutils) runs $CUDA_HOME/bin/nvcc, which no strict mode would notice.
  EXPECT_TRUE(has(rendered("deepspeed", "9.0;12.1"), "DS_ENABLE_NINJA=1"));
  for (const Recipe& r : dir->recipes) {
    if (r.name == "deepspeed") {
      EXPECT_TRUE(r.build.strict_nvcc) << "every DeepSpeed nvcc call splits";
    }
  }
  RenderedBuild bnb = rendered("bitsandbytes", "7.5;9.0;12.1");
  ASSERT_FALSE(bnb.prepare.empty());
  EXPECT_NE(
      std::find(bnb.prepare[0].begin(), bnb.prepare[0].end(), "-DCOMPUTE_CAPABILITY=75;90;121"),
      bnb.prepare[0].end());
}

// The packages built against torch take the farm's own torch (same CUDA release and arch
// set), never PyPI's, whose CUDA 12.8 build cpp_extension refuses with CUDA 13.
TEST(ShippedRecipesTest, TorchPackagesTakeTheFarmsTorch) {
  auto dir = LoadRecipeDirectory(FARM_SOURCE_RECIPES_DIR);
  ASSERT_TRUE(dir.ok()) << dir.status();
  for (const Recipe& r : dir->recipes) {
    const bool needs_torch = r.name == "torchvision" || r.name == "torchaudio" ||
                             r.name == "flash-attn" || r.name == "xformers" ||
                             r.name == "deepspeed";
    for (const std::string& req : r.python_requirements) {
      EXPECT_NE(*RequirementProjectName(req), "torch") << r.name << ": " << req;
    }
    if (!needs_torch) {
      EXPECT_TRUE(r.farm_requirements.empty()) << r.name;
      continue;
    }
    ASSERT_EQ(r.farm_requirements.size(), 1u) << r.name;
    EXPECT_EQ(r.farm_requirements[0].Text(), "torch==2.9.1") << r.name;
    EXPECT_EQ(r.python, "3.10") << r.name << ": pytorch's Python, so the farm's torch installs";
  }
}

TEST(ShippedRecipesTest, PytorchFollowsTheSeed) {
  auto r = LoadRecipeFile(std::string(FARM_SOURCE_RECIPES_DIR) + "/pytorch.toml");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->package, "torch");
  ASSERT_NE(r->FindVersion("2.9.1"), nullptr);
  EXPECT_EQ(r->FindVersion("2.9.1")->source.TagFor("2.9.1"), "v2.9.1");
  EXPECT_EQ(r->python, "3.10");
  EXPECT_EQ(r->platform.ManylinuxCeilingTag("aarch64"), "manylinux_2_35_aarch64");
  // MAX_JOBS is {farm_jobs}: every nvcc call splits, so the farm's width sizes ninja.
  BuildValues values{*ParseArchList("7.5;9.0;12.1"), {13, 0}, "/usr/local/cuda", 24, 64, "2.9.1"};
  auto rendered = RenderBuild(*r, values, [](const std::string&) { return std::nullopt; });
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  for (const char* expected :
       {"TORCH_CUDA_ARCH_LIST=7.5;9.0;12.1", "MAX_JOBS=64", "CFLAGS=-g0", "USE_MKLDNN=0",
        "USE_FBGEMM=0", "CUDACXX=/usr/local/cuda/bin/nvcc", "USE_PRIORITIZED_TEXT_FOR_LD=1",
        "BUILD_TEST=0", "LD_LIBRARY_PATH=/usr/local/cuda/lib64:"}) {
    EXPECT_NE(std::find(rendered->env.begin(), rendered->env.end(), expected), rendered->env.end())
        << expected;
  }
  // Options 2.9.1 ignores are not passed: it reads TORCH_CUDA_ARCH_LIST only.
  for (const char* ignored :
       {"CMAKE_CUDA_ARCHITECTURES=", "CUDAARCHS=", "FORCE_CUDA=", "USE_QNNPACK="}) {
    for (const std::string& e : rendered->env) EXPECT_NE(e.rfind(ignored, 0), 0u) << e;
  }
  EXPECT_EQ(rendered->command, (std::vector<std::string>{"python3.10", "setup.py", "bdist_wheel"}));
}

TEST(ShippedRecipesTest, PytorchTakesNcclAndCudnnFromWheelsForItsToolkit) {
  auto r = LoadRecipeFile(std::string(FARM_SOURCE_RECIPES_DIR) + "/pytorch.toml");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->prerequisites.size(), 2u);
  const Prerequisite& nccl = r->prerequisites[0];
  const Prerequisite& cudnn = r->prerequisites[1];
  EXPECT_EQ(nccl.name, "NCCL");
  EXPECT_EQ(cudnn.name, "cuDNN");
  // Never cloned at build time: the system (wheel) NCCL, found through FindNCCL's variables.
  EXPECT_EQ(nccl.env.at("USE_SYSTEM_NCCL"), "1");
  EXPECT_EQ(nccl.env.at("NCCL_LIB_DIR"), "{site_packages}/nvidia/nccl/lib");
  EXPECT_EQ(nccl.env.at("NCCL_INCLUDE_DIR"), "{site_packages}/nvidia/nccl/include");
  EXPECT_EQ(cudnn.env.at("CUDNN_LIB_DIR"), "{site_packages}/nvidia/cudnn/lib");
  EXPECT_EQ(cudnn.env.at("CUDNN_INCLUDE_DIR"), "{site_packages}/nvidia/cudnn/include");
  // find_library wants libX.so; the wheels ship libX.so.N only.
  EXPECT_EQ(nccl.linker_names,
            (std::vector<std::string>{"{site_packages}/nvidia/nccl/lib/libnccl.so.2"}));
  EXPECT_EQ(cudnn.linker_names,
            (std::vector<std::string>{"{site_packages}/nvidia/cudnn/lib/libcudnn.so.9"}));
  // The wheels match the toolkit: -cu13 with CUDA 13.0, -cu12 with 12.x.
  EXPECT_EQ(*PrerequisiteWheelFor(nccl, {13, 0}), "nvidia-nccl-cu13>=2.27.5,<2.28");
  EXPECT_EQ(*PrerequisiteWheelFor(cudnn, {12, 6}), "nvidia-cudnn-cu12>=9.10.2.21,<9.14");
  // USE_SYSTEM_NCCL lives with the prerequisite only (the loader refuses it in both places).
  EXPECT_EQ(r->build.env.count("USE_SYSTEM_NCCL"), 0u);
  EXPECT_EQ(r->build.env.at("USE_CUDNN"), "1");
}

TEST(ShippedRecipesTest, DemoUploadsTheExampleTree) {
  auto r = LoadRecipeFile(std::string(FARM_SOURCE_RECIPES_DIR) + "/demo.toml");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->versions.empty());
  EXPECT_EQ(r->versions[0].source.KindName(), "upload");
  EXPECT_NE(r->versions[0].source.default_dir.find("examples/demo-cuda-ext"), std::string::npos);
}

}  // namespace
}  // namespace farm
