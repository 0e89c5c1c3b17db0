#include "coordinator/scheduler/scheduler.h"

#include <atomic>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/digest/digest.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class FakeBlobs : public BlobIndex {
 public:
  bool Contains(const farm::v1::Digest& d) override {
    absl::MutexLock lock(&mu);
    return present.count(d.hash()) > 0;
  }
  absl::StatusOr<std::string> Read(const farm::v1::Digest& d, int64_t) override {
    absl::MutexLock lock(&mu);
    auto it = bytes.find(d.hash());
    if (it == bytes.end()) return absl::NotFoundError(d.hash());
    return it->second;
  }
  void Pin(const std::string& owner, const std::vector<farm::v1::Digest>& digests) override {
    absl::MutexLock lock(&mu);
    pins.insert(owner);
    for (const auto& d : digests) pinned[owner].insert(d.hash());
  }
  void Unpin(const std::string& owner) override {
    absl::MutexLock lock(&mu);
    pins.erase(owner);
    pinned.erase(owner);
  }
  absl::Mutex mu;
  std::set<std::string> present;
  std::map<std::string, std::string> bytes;  // of the blobs Read may give
  std::set<std::string> pins;
  std::map<std::string, std::set<std::string>> pinned;  // owner -> hashes
};

const HistoryScopes kAdminHistory{.write = "admin", .read = {"admin"}};

farm::v1::Worker MakeWorker(const std::string& name, const std::string& cuda) {
  farm::v1::Worker w;
  w.set_name(name);
  w.set_state(farm::v1::WORKER_STATE_ONLINE);
  auto* c = w.mutable_capabilities();
  c->set_os("linux");
  c->set_cpu_arch("x86_64");
  c->set_slots(2);
  auto* t = c->add_cuda();
  t->set_version(cuda);
  t->add_sms("sm_90");
  return w;
}

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("scheduler_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    workers_ = {MakeWorker("w1", "13.0")};
    input_ = DigestOfBytes("__global__ void k() {}");
    blobs_.present.insert(input_.hash());
    Reopen();
  }
  void TearDown() override {
    scheduler_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  void Reopen() {
    scheduler_.reset();
    store_.reset();
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    scheduler_ = std::make_unique<Scheduler>(
        store_.get(), &blobs_, [this] { return workers_; }, &metrics_, options_,
        [this] { return now_; });
    ASSERT_TRUE(scheduler_->Load().ok());
  }
  farm::v1::Action Compile(const std::string& arch, const std::string& build = "b1") {
    farm::v1::Action a;
    a.add_argv("nvcc");
    a.add_argv("-arch=" + arch);
    auto* in = a.add_inputs();
    in->set_path("k.cu");
    *in->mutable_digest() = input_;
    a.add_output_paths("k.cubin");
    a.mutable_requirements()->set_cuda_version("13.0");
    a.set_build_id(build);
    a.set_shard(arch);
    return a;
  }
  farm::v1::ActionStatus Submit(const farm::v1::Action& a) {
    auto s = scheduler_->Execute({a}, kAdminHistory);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? s->front() : farm::v1::ActionStatus();
  }
  std::vector<farm::v1::Lease> LeaseFor(const std::string& worker, const std::string& session,
                                        uint32_t slots = 4) {
    farm::v1::WorkerCapabilities caps = MakeWorker(worker, "13.0").capabilities();
    auto l = scheduler_->Lease(worker, session, caps, slots, absl::ZeroDuration());
    EXPECT_TRUE(l.ok()) << l.status();
    return l.ok() ? *l : std::vector<farm::v1::Lease>();
  }
  // Submits one action, leases it to w1 and completes it; returns its id.
  std::string RunToCompletion(const std::string& arch) {
    const std::string id = Submit(Compile(arch)).action_id();
    auto leases = LeaseFor("w1", "s1");
    EXPECT_EQ(leases.size(), 1u);
    if (!leases.empty()) {
      EXPECT_TRUE(scheduler_->Complete("w1", {Done(leases[0])}).ok());
    }
    return id;
  }
  farm::v1::Completion Done(const farm::v1::Lease& lease, int exit_code = 0) {
    farm::v1::Completion c;
    c.set_lease_id(lease.lease_id());
    c.set_action_id(lease.action_id());
    c.mutable_result()->set_exit_code(exit_code);
    return c;
  }

  // A history-keyed compile whose argv differs per key and `run`, so no run is a cache hit.
  farm::v1::Action Keyed(const std::string& key, int run) {
    farm::v1::Action a = Compile("sm_90");
    a.add_argv(absl::StrCat("--tu=", key, " --run=", run));
    a.set_history_key(key);
    return a;
  }
  // Runs `action` on w1 alone, reporting `seconds` of wall time and `ram` bytes at peak.
  void RunAndLearn(const farm::v1::Action& action, double seconds, uint64_t ram) {
    Submit(action);
    auto leases = LeaseFor("w1", "learn", 1);
    ASSERT_EQ(leases.size(), 1u);
    farm::v1::Completion c = Done(leases[0]);
    c.mutable_result()->set_wall_seconds(seconds);
    c.mutable_result()->set_peak_rss_bytes(ram);
    ASSERT_TRUE(scheduler_->Complete("w1", {c})->empty());
  }
  std::vector<std::string> LeasedKeys(const std::vector<farm::v1::Lease>& leases) {
    std::vector<std::string> keys;
    for (const auto& l : leases) keys.push_back(l.action().history_key());
    return keys;
  }

  fs::path dir_;
  SchedulerOptions options_{.lease_ttl = absl::Seconds(10), .max_worker_deaths = 2};
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  std::vector<farm::v1::Worker> workers_;
  farm::v1::Digest input_;
  FakeBlobs blobs_;
  MetricsRegistry metrics_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, QueueLeaseCompleteThenCacheHit) {
  auto status = Submit(Compile("sm_90"));
  EXPECT_EQ(status.state(), farm::v1::ACTION_STATE_QUEUED);
  EXPECT_EQ(blobs_.pins.count(status.action_id()), 1u);
  auto leases = LeaseFor("w1", "s1");
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].action().timeout_seconds(), 3600u);
  auto rejected = scheduler_->Complete("w1", {Done(leases[0])});
  ASSERT_TRUE(rejected.ok());
  EXPECT_TRUE(rejected->empty());
  auto done = scheduler_->Get(status.action_id());
  EXPECT_EQ(done->state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ(done->result().worker(), "w1");
  EXPECT_EQ(blobs_.pins.count(status.action_id()), 0u);

  // The same action again is answered from the cache, running nothing.
  auto again = Submit(Compile("sm_90", "another-build"));
  EXPECT_EQ(again.state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_TRUE(again.result().cache_hit());
  EXPECT_TRUE(LeaseFor("w1", "s1").empty());
}

TEST_F(SchedulerTest, FinishedActionsArePrunedPastTheirRetentionFromMemoryAndStore) {
  // Defaults: a week, 100,000 records. Three finished actions an hour apart, one still queued.
  std::vector<std::string> done;
  for (const char* arch : {"sm_75", "sm_90", "sm_100"}) {
    done.push_back(RunToCompletion(arch));
    now_ += absl::Hours(1);
  }
  const std::string queued = Submit(Compile("sm_120")).action_id();
  scheduler_->Sweep();
  for (const auto& id : done) EXPECT_TRUE(scheduler_->Get(id).ok());

  // A week after the first finished: it goes, the others stay.
  now_ += absl::Hours(24 * 7) - absl::Hours(2) - absl::Minutes(30);
  scheduler_->Sweep();
  EXPECT_EQ(scheduler_->Get(done[0]).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(scheduler_->Get(done[1]).ok());
  EXPECT_EQ(scheduler_->CountsByState().completed, 2u);
  // Gone from the store too; the live action and the results in the action cache are not.
  Reopen();
  EXPECT_EQ(scheduler_->Get(done[0]).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(scheduler_->Get(queued)->state(), farm::v1::ACTION_STATE_QUEUED);
  EXPECT_TRUE(Submit(Compile("sm_75", "later")).result().cache_hit());
}

TEST_F(SchedulerTest, OnlyLiveActionsStayInMemoryFinishedOnesAreReadFromTheStore) {
  const std::string done = RunToCompletion("sm_75");
  const std::string queued = Submit(Compile("sm_120")).action_id();
  scheduler_->Sweep();
  EXPECT_EQ(scheduler_->ActionsInMemory(), 2u);  // just finished: still in memory
  now_ += absl::Seconds(31);
  scheduler_->Sweep();
  EXPECT_EQ(scheduler_->ActionsInMemory(), 1u);  // only the queued one
  // Every client call still answers for the finished action, from the store.
  auto got = scheduler_->Get(done);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state(), farm::v1::ACTION_STATE_COMPLETED);
  auto waited = scheduler_->Wait({done, queued}, absl::ZeroDuration());
  ASSERT_TRUE(waited.ok()) << waited.status();
  EXPECT_EQ((*waited)[0].state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ((*waited)[1].state(), farm::v1::ACTION_STATE_QUEUED);
  EXPECT_EQ(scheduler_->Cancel(done)->state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ(scheduler_->Get("no-such-action").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(scheduler_->CountsByState().completed, 1u);
  EXPECT_EQ(scheduler_->CountsByState().queued, 1u);
  // A restart loads only the live action, and still counts the finished one.
  Reopen();
  EXPECT_EQ(scheduler_->ActionsInMemory(), 1u);
  EXPECT_EQ(scheduler_->CountsByState().completed, 1u);
  EXPECT_EQ(scheduler_->Get(done)->state(), farm::v1::ACTION_STATE_COMPLETED);
}

TEST_F(SchedulerTest, AtMostMaxFinishedInMemoryAreHeldOldestLeaveFirst) {
  scheduler_ = std::make_unique<Scheduler>(
      store_.get(), &blobs_, [this] { return workers_; }, &metrics_,
      SchedulerOptions{.lease_ttl = absl::Seconds(10), .max_finished_in_memory = 2},
      [this] { return now_; });
  ASSERT_TRUE(scheduler_->Load().ok());
  // Three finished well within finished_in_memory, one still queued.
  std::vector<std::string> done;
  for (const char* arch : {"sm_75", "sm_90", "sm_100"}) {
    done.push_back(RunToCompletion(arch));
    now_ += absl::Seconds(1);
  }
  const std::string queued = Submit(Compile("sm_120")).action_id();
  EXPECT_EQ(scheduler_->ActionsInMemory(), 3u);  // the two newest finished and the queued one
  scheduler_->Sweep();
  EXPECT_EQ(scheduler_->ActionsInMemory(), 3u);
  // The oldest is answered from the store, and counted once.
  auto got = scheduler_->Get(done[0]);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ(scheduler_->CountsByState().completed, 3u);
  EXPECT_EQ(scheduler_->CountsByState().queued, 1u);
  // Time still lets the rest go.
  now_ += absl::Seconds(31);
  scheduler_->Sweep();
  EXPECT_EQ(scheduler_->ActionsInMemory(), 1u);
  EXPECT_EQ(scheduler_->CountsByState().completed, 3u);
}

TEST_F(SchedulerTest, AtMostMaxFinishedRecordsAreKeptNewestFirst) {
  scheduler_ = std::make_unique<Scheduler>(
      store_.get(), &blobs_, [this] { return workers_; }, &metrics_,
      SchedulerOptions{.lease_ttl = absl::Seconds(10), .max_finished = 2}, [this] { return now_; });
  ASSERT_TRUE(scheduler_->Load().ok());
  std::vector<std::string> done;
  for (const char* arch : {"sm_75", "sm_90", "sm_100"}) {
    done.push_back(RunToCompletion(arch));
    now_ += absl::Seconds(1);
  }
  scheduler_->Sweep();
  EXPECT_EQ(scheduler_->Get(done[0]).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(scheduler_->Get(done[1]).ok());
  EXPECT_TRUE(scheduler_->Get(done[2]).ok());
}

TEST_F(SchedulerTest, OverTheCapTheRecordsThatFinishedFirstGoWhateverTheirSubmitOrder) {
  scheduler_ = std::make_unique<Scheduler>(
      store_.get(), &blobs_, [this] { return workers_; }, &metrics_,
      SchedulerOptions{.lease_ttl = absl::Minutes(10), .max_finished = 2}, [this] { return now_; });
  ASSERT_TRUE(scheduler_->Load().ok());
  std::vector<std::string> ids;
  for (const char* arch : {"sm_70", "sm_75", "sm_80", "sm_86", "sm_90"}) {
    ids.push_back(Submit(Compile(arch)).action_id());
  }
  auto leases = LeaseFor("w1", "s1", 5);
  ASSERT_EQ(leases.size(), 5u);
  std::map<std::string, farm::v1::Lease> lease_of;
  for (const auto& l : leases) lease_of[l.action_id()] = l;
  // Finished in another order than submitted: the 4th, 1st, 5th, then 2nd and 3rd last.
  for (int i : {3, 0, 4, 1, 2}) {
    ASSERT_TRUE(scheduler_->Complete("w1", {Done(lease_of.at(ids[i]))}).ok());
    now_ += absl::Seconds(1);
  }
  scheduler_->Sweep();
  for (int i : {3, 0, 4}) {
    EXPECT_EQ(scheduler_->Get(ids[i]).status().code(), absl::StatusCode::kNotFound) << i;
  }
  for (int i : {1, 2}) EXPECT_TRUE(scheduler_->Get(ids[i]).ok()) << i;
  EXPECT_EQ(scheduler_->CountsByState().completed, 2u);
}

TEST_F(SchedulerTest, IdenticalInFlightActionsRunOnce) {
  auto a = Submit(Compile("sm_90"));
  auto b = Submit(Compile("sm_90"));
  EXPECT_EQ(a.action_id(), b.action_id());
  EXPECT_EQ(LeaseFor("w1", "s1").size(), 1u);
}

// Issue 24: a build token may read only its own build's actions, so another build is never
// handed this one's id; it gets an action of its own.
TEST_F(SchedulerTest, AnotherBuildNeverJoinsAnInFlightAction) {
  auto a = Submit(Compile("sm_90", "b1"));
  auto b = Submit(Compile("sm_90", "b2"));
  EXPECT_NE(a.action_id(), b.action_id());
  EXPECT_EQ(b.build_id(), "b2");
  EXPECT_EQ(LeaseFor("w1", "s1").size(), 2u);
}

TEST_F(SchedulerTest, UnschedulableFailsFastNamingTheRequirement) {
  auto a = Compile("sm_90");
  a.mutable_requirements()->set_cuda_version("12.9");
  auto status = Submit(a);
  EXPECT_EQ(status.state(), farm::v1::ACTION_STATE_FAILED);
  EXPECT_THAT(status.error(), HasSubstr("w1 needs CUDA 12.9, has CUDA 13.0"));
  // Clients tell this failure by its flag, and read each worker's refusal apart.
  EXPECT_TRUE(status.unplaceable());
  EXPECT_THAT(status.placement_refusals(), ElementsAre("w1 needs CUDA 12.9, has CUDA 13.0"));
  // Unless the client asked to wait for such a worker.
  a.set_wait_for_worker(true);
  const farm::v1::ActionStatus waiting = Submit(a);
  EXPECT_EQ(waiting.state(), farm::v1::ACTION_STATE_QUEUED);
  EXPECT_FALSE(waiting.unplaceable());
  // With no worker online there is no one to refuse.
  workers_.clear();
  const farm::v1::ActionStatus alone = Submit(Compile("sm_80"));
  EXPECT_EQ(alone.state(), farm::v1::ACTION_STATE_FAILED);
  EXPECT_TRUE(alone.unplaceable());
  EXPECT_THAT(alone.placement_refusals(), IsEmpty());
  EXPECT_THAT(alone.error(), HasSubstr("no worker is online"));
}

TEST_F(SchedulerTest, RefusesEscapingPathsAndMissingInputs) {
  auto escape = Compile("sm_90");
  escape.set_output_paths(0, "../../etc/passwd");
  auto s = scheduler_->Execute({escape});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("climbs out"));
  auto absolute = Compile("sm_90");
  absolute.mutable_inputs(0)->set_path("/tmp/k.cu");
  EXPECT_EQ(scheduler_->Execute({absolute}).status().code(), absl::StatusCode::kInvalidArgument);
  auto missing = Compile("sm_90");
  *missing.mutable_inputs(0)->mutable_digest() = DigestOfBytes("not uploaded");
  auto m = scheduler_->Execute({missing});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("upload it first"));
}

// The third probe's disk filler: a 256 KiB blob named 650 times by one input tree (162 MiB
// written on a worker), and at the format's limits 200,000 paths of a 64 MiB blob. Refused at
// submission, naming the limit and its setting; nothing is queued.
TEST_F(SchedulerTest, AnImageActionWhoseTreesWeighMoreThanTheLimitIsRefused) {
  options_.max_action_input_bytes = uint64_t{64} << 20;
  Reopen();
  auto tree_of = [&](int copies, int64_t size) {
    farm::v1::FileTree tree;
    const farm::v1::Digest blob = DigestOfBytes("one blob");
    for (int i = 0; i < copies; ++i) {
      auto* f = tree.add_files();
      f->set_path(absl::StrCat("out/f", i));
      f->mutable_digest()->set_hash(blob.hash());
      f->mutable_digest()->set_size_bytes(size);
    }
    const std::string bytes = tree.SerializeAsString();
    const farm::v1::Digest digest = DigestOfBytes(bytes);
    blobs_.present.insert(digest.hash());
    blobs_.bytes[digest.hash()] = bytes;
    return digest;
  };
  auto image_action = [&](const farm::v1::Digest& inputs) {
    farm::v1::Action a;
    a.add_argv("/usr/bin/g++");
    a.add_argv("-c");
    a.set_working_directory("/src");
    a.mutable_toolchain()->set_compiler("/usr/bin/g++");
    a.mutable_toolchain()->set_cpu_arch("x86_64");
    *a.mutable_toolchain()->mutable_tree() = tree_of(1, 1000);
    *a.mutable_input_tree() = inputs;
    a.mutable_requirements()->set_cpu_arch("x86_64");
    a.mutable_requirements()->set_sandbox(true);
    a.add_output_paths("src/a.o");
    a.set_wait_for_worker(true);  // the test's workers have no sandbox
    return a;
  };
  auto refused = scheduler_->Execute({image_action(tree_of(650, 256 << 10))}, kAdminHistory);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("162.5 MiB"), HasSubstr("651 entries"), HasSubstr("64.0 MiB"),
                    HasSubstr("farm-coordinator --max-action-input")));
  options_.max_action_input_bytes = SchedulerOptions{}.max_action_input_bytes;
  Reopen();
  EXPECT_EQ(scheduler_->Execute({image_action(tree_of(200000, int64_t{64} << 20))}, kAdminHistory)
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(scheduler_->CountsByState().queued, 0u);
  // Within the limit it queues; a tree that is not a tree is refused as such.
  EXPECT_EQ(scheduler_->Execute({image_action(tree_of(10, 1000))}, kAdminHistory)->front().state(),
            farm::v1::ACTION_STATE_QUEUED);
  const farm::v1::Digest junk = DigestOfBytes("\xff\xff\xff");
  blobs_.present.insert(junk.hash());
  blobs_.bytes[junk.hash()] = "\xff\xff\xff";
  EXPECT_EQ(scheduler_->Execute({image_action(junk)}, kAdminHistory).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// What one tenant's builds teach is theirs (history_scope.h): another's run of the same key
// neither reads nor rewrites it.
TEST_F(SchedulerTest, LearntCostsStayInTheScopeThatLearntThem) {
  const HistoryScopes victim{.write = "builds/token:v/torch",
                             .read = {"builds/token:v/torch", "admin"}};
  const HistoryScopes attacker{.write = "token:a", .read = {"token:a", "admin"}};
  auto run = [&](const farm::v1::Action& action, const HistoryScopes& scopes, double seconds) {
    ASSERT_TRUE(scheduler_->Execute({action}, scopes).ok());
    auto leases = LeaseFor("w1", "learn", 1);
    ASSERT_EQ(leases.size(), 1u);
    farm::v1::Completion done = Done(leases[0]);
    done.mutable_result()->set_wall_seconds(seconds);
    ASSERT_TRUE(scheduler_->Complete("w1", {done})->empty());
  };
  run(Keyed("Sort.cu sm_90", 0), victim, 0.02);
  EXPECT_THAT(scheduler_->LearntSeconds(attacker.read, {"Sort.cu sm_90"}), ElementsAre(0));
  run(Keyed("Sort.cu sm_90", 1), attacker, 4.5);
  EXPECT_THAT(scheduler_->LearntSeconds(victim.read, {"Sort.cu sm_90"}), ElementsAre(0.02));
  EXPECT_THAT(scheduler_->LearntSeconds(attacker.read, {"Sort.cu sm_90"}), ElementsAre(4.5));
  // Kept across a restart, in the same scopes.
  Reopen();
  EXPECT_THAT(scheduler_->LearntSeconds(victim.read, {"Sort.cu sm_90"}), ElementsAre(0.02));
}

TEST_F(SchedulerTest, ExpiredLeaseRequeuesWithoutChargingARetry) {
  auto status = Submit(Compile("sm_90"));
  auto first = LeaseFor("w1", "s1");
  ASSERT_EQ(first.size(), 1u);
  now_ += absl::Seconds(11);
  scheduler_->Sweep();
  EXPECT_EQ(scheduler_->Get(status.action_id())->state(), farm::v1::ACTION_STATE_QUEUED);
  auto second = LeaseFor("w2", "s2");
  ASSERT_EQ(second.size(), 1u);
  // The first worker's late result is refused: its lease was revoked.
  auto rejected = scheduler_->Complete("w1", {Done(first[0])});
  EXPECT_EQ(*rejected, std::vector<std::string>{first[0].lease_id()});
  EXPECT_EQ(scheduler_->Renew("w1", "s1", {first[0].lease_id()}),
            std::vector<std::string>{first[0].lease_id()});
  EXPECT_TRUE(scheduler_->Complete("w2", {Done(second[0])})->empty());
  auto done = scheduler_->Get(status.action_id());
  EXPECT_EQ(done->state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ(done->worker_deaths(), 0u);
  EXPECT_EQ(done->attempts(), 2u);
}

TEST_F(SchedulerTest, ActionsThatKillTheirWorkersFailAfterTheCap) {
  auto status = Submit(Compile("sm_90"));
  for (int i = 0; i < 2; ++i) {
    auto lease = LeaseFor("w1", "s" + std::to_string(i));
    ASSERT_EQ(lease.size(), 1u) << i;
    scheduler_->OnSessionEnded("w1", "s" + std::to_string(i), /*died=*/true);
  }
  auto failed = scheduler_->Get(status.action_id());
  EXPECT_EQ(failed->state(), farm::v1::ACTION_STATE_FAILED);
  EXPECT_THAT(failed->error(), HasSubstr("2 workers died"));
}

TEST_F(SchedulerTest, CleanLeaveDoesNotChargeRetries) {
  auto status = Submit(Compile("sm_90"));
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(LeaseFor("w1", "s" + std::to_string(i)).size(), 1u);
    scheduler_->OnSessionEnded("w1", "s" + std::to_string(i), /*died=*/false);
  }
  EXPECT_EQ(scheduler_->Get(status.action_id())->state(), farm::v1::ACTION_STATE_QUEUED);
}

TEST_F(SchedulerTest, CancelQueuedAndRunning) {
  auto queued = Submit(Compile("sm_90"));
  auto running = Submit(Compile("sm_100"));
  auto lease = LeaseFor("w1", "s1", 1);
  ASSERT_EQ(lease.size(), 1u);
  const std::string other =
      lease[0].action_id() == queued.action_id() ? running.action_id() : queued.action_id();
  EXPECT_EQ(scheduler_->Cancel(other)->state(), farm::v1::ACTION_STATE_CANCELLED);
  EXPECT_EQ(scheduler_->Cancel(lease[0].action_id())->state(), farm::v1::ACTION_STATE_CANCELLED);
  EXPECT_EQ(scheduler_->Renew("w1", "s1", {lease[0].lease_id()}),
            std::vector<std::string>{lease[0].lease_id()});
  EXPECT_TRUE(LeaseFor("w1", "s1").empty());
  EXPECT_EQ(scheduler_->Cancel("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SchedulerTest, BuildsAreServedRoundRobin) {
  for (const char* arch : {"sm_75", "sm_80", "sm_90"}) Submit(Compile(arch, "big"));
  Submit(Compile("sm_121", "small"));
  auto leases = LeaseFor("w1", "s1", 2);
  ASSERT_EQ(leases.size(), 2u);
  std::set<std::string> builds;
  for (const auto& l : leases) builds.insert(l.action().build_id());
  EXPECT_EQ(builds, (std::set<std::string>{"big", "small"}));
}

TEST_F(SchedulerTest, RestartKeepsQueueLeasesAndResults) {
  auto queued = Submit(Compile("sm_75"));
  auto running = Submit(Compile("sm_90"));
  auto finished = Submit(Compile("sm_100"));
  auto leases = LeaseFor("w1", "s1", 3);
  ASSERT_EQ(leases.size(), 3u);
  for (const auto& l : leases) {
    if (l.action_id() == finished.action_id()) {
      ASSERT_TRUE(scheduler_->Complete("w1", {Done(l)})->empty());
    }
  }
  // The coordinator dies with two actions running and one finished.
  Reopen();
  EXPECT_EQ(scheduler_->Get(finished.action_id())->state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ(scheduler_->Get(running.action_id())->state(), farm::v1::ACTION_STATE_RUNNING);
  EXPECT_EQ(scheduler_->Get(queued.action_id())->state(), farm::v1::ACTION_STATE_RUNNING);
  // The worker that held the leases completes them after the restart: accepted once.
  for (const auto& l : leases) {
    if (l.action_id() == finished.action_id()) {
      EXPECT_EQ(scheduler_->Complete("w1", {Done(l)})->size(), 1u);  // already done
    } else {
      EXPECT_TRUE(scheduler_->Complete("w1", {Done(l)})->empty());
    }
  }
  EXPECT_EQ(scheduler_->CountsByState().completed, 3u);
  EXPECT_TRUE(LeaseFor("w1", "s2").empty());
}

TEST_F(SchedulerTest, LeasesFoundAtStartOutlastAShortTtlWhileTheirWorkersReconnect) {
  auto status = Submit(Compile("sm_90"));
  auto leases = LeaseFor("w1", "s1");
  ASSERT_EQ(leases.size(), 1u);
  Reopen();
  // Past the 10 s TTL but within the restart grace: the worker is still reconnecting.
  now_ += absl::Seconds(20);
  scheduler_->Sweep();
  EXPECT_EQ(scheduler_->Get(status.action_id())->state(), farm::v1::ACTION_STATE_RUNNING);
  EXPECT_TRUE(scheduler_->Complete("w1", {Done(leases[0])})->empty());
  EXPECT_EQ(scheduler_->Get(status.action_id())->attempts(), 1u);

  // A worker that never comes back loses the lease once the grace is over.
  auto other = Submit(Compile("sm_75"));
  ASSERT_EQ(LeaseFor("w2", "s2").size(), 1u);
  Reopen();
  now_ += options_.restart_lease_grace + absl::Seconds(1);
  scheduler_->Sweep();
  EXPECT_EQ(scheduler_->Get(other.action_id())->state(), farm::v1::ACTION_STATE_QUEUED);
}

TEST_F(SchedulerTest, WaitReturnsWhenDoneOrAtTimeout) {
  auto status = Submit(Compile("sm_90"));
  auto pending = scheduler_->Wait({status.action_id()}, absl::ZeroDuration());
  EXPECT_EQ(pending->front().state(), farm::v1::ACTION_STATE_QUEUED);
  auto lease = LeaseFor("w1", "s1");
  ASSERT_TRUE(scheduler_->Complete("w1", {Done(lease[0], 2)})->empty());
  auto done = scheduler_->Wait({status.action_id()}, absl::Seconds(1));
  EXPECT_EQ(done->front().state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ(done->front().result().exit_code(), 2);
  // A failing run is not cached.
  EXPECT_EQ(Submit(Compile("sm_90")).state(), farm::v1::ACTION_STATE_QUEUED);
}

TEST_F(SchedulerTest, TheLongestExpectedActionOfABuildRunsFirstOnceLearnt) {
  RunAndLearn(Keyed("flash_bwd_hdim256.cu sm_90", 0), 600, 0);
  RunAndLearn(Keyed("Sort.cu sm_90", 0), 20, 0);
  // Submitted light first, then heavy: the heavy one is leased first.
  Submit(Keyed("Sort.cu sm_90", 1));
  Submit(Keyed("flash_bwd_hdim256.cu sm_90", 1));
  EXPECT_THAT(LeasedKeys(LeaseFor("w1", "s1", 1)),
              ::testing::ElementsAre("flash_bwd_hdim256.cu sm_90"));
  // The history survives a restart.
  Reopen();
  Submit(Keyed("Sort.cu sm_90", 2));
  Submit(Keyed("flash_bwd_hdim256.cu sm_90", 2));
  EXPECT_THAT(
      LeasedKeys(LeaseFor("w2", "s2", 3)),
      ::testing::ElementsAre("flash_bwd_hdim256.cu sm_90", "Sort.cu sm_90", "Sort.cu sm_90"));
}

TEST_F(SchedulerTest, ActionsSubmittedTogetherAreRankedByTheLongestAndKeepTheirOrder) {
  RunAndLearn(Keyed("flash_bwd.cu sm_90", 0), 600, 0);
  RunAndLearn(Keyed("flash_bwd.cu sm_75", 0), 5, 0);
  RunAndLearn(Keyed("Sort.cu sm_90", 0), 20, 0);
  Submit(Keyed("Sort.cu sm_90", 1));
  // One translation unit's archs in one call, its short one first (farm-nvcc's early job).
  auto both = scheduler_->Execute({Keyed("flash_bwd.cu sm_75", 1), Keyed("flash_bwd.cu sm_90", 1)},
                                  kAdminHistory);
  ASSERT_TRUE(both.ok());
  EXPECT_THAT(LeasedKeys(LeaseFor("w1", "s1", 3)),
              ::testing::ElementsAre("flash_bwd.cu sm_75", "flash_bwd.cu sm_90", "Sort.cu sm_90"));
}

TEST_F(SchedulerTest, FifoOrderIgnoresHistory) {
  options_.queue_order = QueueOrder::kFifo;
  Reopen();
  RunAndLearn(Keyed("heavy.cu sm_90", 0), 600, 0);
  RunAndLearn(Keyed("light.cu sm_90", 0), 1, 0);
  Submit(Keyed("light.cu sm_90", 1));
  Submit(Keyed("heavy.cu sm_90", 1));
  EXPECT_THAT(LeasedKeys(LeaseFor("w1", "s1", 1)), ::testing::ElementsAre("light.cu sm_90"));
}

TEST_F(SchedulerTest, ActionsWithoutHistoryAreOrderedByInputSize) {
  farm::v1::Action small = Compile("sm_90");
  small.set_history_key("small.cu sm_90");
  farm::v1::Action large = Compile("sm_90");
  large.set_history_key("large.cu sm_90");
  *large.mutable_inputs(0)->mutable_digest() = DigestOfBytes(std::string(100'000, 'x'));
  blobs_.present.insert(large.inputs(0).digest().hash());
  Submit(small);
  Submit(large);
  EXPECT_THAT(LeasedKeys(LeaseFor("w1", "s1", 1)), ::testing::ElementsAre("large.cu sm_90"));
}

// A first build (issue 45): nothing learnt, but the launcher's hint (a recipe's cost hints)
// names the heavy unit, which is leased first though submitted last and though a larger
// input would otherwise lead; a hint that is not a time is refused.
TEST_F(SchedulerTest, WithoutHistoryAHintedActionIsOrderedByItsHint) {
  farm::v1::Action large = Compile("sm_90");
  large.set_history_key("large.cu sm_90");
  *large.mutable_inputs(0)->mutable_digest() = DigestOfBytes(std::string(100'000, 'x'));
  blobs_.present.insert(large.inputs(0).digest().hash());
  farm::v1::Action hinted = Compile("sm_90");
  hinted.set_history_key("flash_bwd_hdim256.cu sm_90");
  hinted.set_expected_seconds(900);
  Submit(large);
  Submit(hinted);
  EXPECT_THAT(LeasedKeys(LeaseFor("w1", "s1", 2)),
              ::testing::ElementsAre("flash_bwd_hdim256.cu sm_90", "large.cu sm_90"));
  for (double bad : {-1.0, 86401.0, std::numeric_limits<double>::infinity()}) {
    farm::v1::Action odd = Compile("sm_90");
    odd.set_expected_seconds(bad);
    auto refused = scheduler_->Execute({odd}, kAdminHistory);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(SchedulerTest, AWorkerIsNotLeasedMoreThanItsRamHoldsByLearntPeaks) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  RunAndLearn(Keyed("flash_bwd.cu sm_90", 0), 100, 5 * kGiB);
  for (int run = 1; run <= 4; ++run) Submit(Keyed("flash_bwd.cu sm_90", run));
  farm::v1::WorkerCapabilities caps = MakeWorker("w1", "13.0").capabilities();
  caps.set_ram_bytes(12 * kGiB);
  auto lease = [&](uint32_t slots) {
    auto l = scheduler_->Lease("w1", "s1", caps, slots, absl::ZeroDuration());
    EXPECT_TRUE(l.ok()) << l.status();
    return l.ok() ? *l : std::vector<farm::v1::Lease>();
  };
  // 2 x 5 GiB fit in 12 GiB; a third would not, whatever the free slots.
  auto first = lease(8);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_TRUE(lease(6).empty());
  // An action with nothing learnt and no RAM requirement still fits beside them.
  farm::v1::Action unknown = Compile("sm_75");
  Submit(unknown);
  EXPECT_THAT(LeasedKeys(lease(6)), ::testing::ElementsAre(""));
  // One finishing frees its 5 GiB for the next.
  ASSERT_TRUE(scheduler_->Complete("w1", {Done(first[0])})->empty());
  EXPECT_EQ(lease(6).size(), 1u);
  // A worker running nothing takes an action bigger than its RAM rather than never running it.
  caps.set_ram_bytes(4 * kGiB);
  auto other = scheduler_->Lease("w2", "s2", caps, 4, absl::ZeroDuration());
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->size(), 1u);
}

TEST_F(SchedulerTest, WithoutMemoryAwarenessFreeSlotsAloneDecide) {
  options_.memory_aware = false;
  Reopen();
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  RunAndLearn(Keyed("flash_bwd.cu sm_90", 0), 100, 5 * kGiB);
  for (int run = 1; run <= 4; ++run) Submit(Keyed("flash_bwd.cu sm_90", run));
  farm::v1::WorkerCapabilities caps = MakeWorker("w1", "13.0").capabilities();
  caps.set_ram_bytes(12 * kGiB);
  auto leases = scheduler_->Lease("w1", "s1", caps, 8, absl::ZeroDuration());
  ASSERT_TRUE(leases.ok());
  EXPECT_EQ(leases->size(), 4u);
}

// Pins follow actions whatever the interleaving: clients submitting the same actions (joined
// while in flight), cancelling them and workers running them at once end with exactly the
// live actions pinned, each on its inputs, and every queued action still leasable.
TEST_F(SchedulerTest, PinsAreExactlyTheLiveActionsWhateverCancelsRaceWith) {
  options_.queue_order = QueueOrder::kFifo;
  Reopen();
  std::vector<farm::v1::Action> pool;
  for (int i = 0; i < 12; ++i) {
    farm::v1::Action a = Compile("sm_90");
    a.add_argv(absl::StrCat("-DVARIANT=", i));
    a.set_skip_cache(i % 3 == 0);
    pool.push_back(a);
  }
  absl::Mutex mu;
  std::vector<std::string> seen;
  std::atomic<bool> stop{false};
  auto submitter = [&](int seed) {
    for (int round = 0; round < 200; ++round) {
      std::vector<farm::v1::Action> batch;
      for (int k = 0; k < 3; ++k) batch.push_back(pool[(seed * 7 + round * 5 + k * 3) % 12]);
      auto s = scheduler_->Execute(batch);
      ASSERT_TRUE(s.ok()) << s.status();
      absl::MutexLock lock(&mu);
      for (const auto& st : *s) seen.push_back(st.action_id());
    }
  };
  auto canceller = [&] {
    for (int round = 0; !stop.load(); ++round) {
      std::string id;
      {
        absl::MutexLock lock(&mu);
        if (seen.empty()) continue;
        id = seen[(round * 13) % seen.size()];
      }
      auto c = scheduler_->Cancel(id);
      EXPECT_TRUE(c.ok() || absl::IsNotFound(c.status())) << c.status();
    }
  };
  auto runner = [&] {
    farm::v1::WorkerCapabilities caps = MakeWorker("w1", "13.0").capabilities();
    for (int round = 0; !stop.load(); ++round) {
      auto leases = scheduler_->Lease("w1", "s1", caps, 2, absl::ZeroDuration());
      ASSERT_TRUE(leases.ok()) << leases.status();
      std::vector<farm::v1::Completion> done;
      for (const auto& l : *leases) {
        if (round % 2 == 0) done.push_back(Done(l, round % 4 == 0 ? 0 : 1));
      }
      if (!done.empty()) {
        ASSERT_TRUE(scheduler_->Complete("w1", done).ok());
      }
    }
  };
  std::thread a(submitter, 1), b(submitter, 2), c(canceller), d(runner);
  a.join();
  b.join();
  stop.store(true);
  c.join();
  d.join();

  std::set<std::string> live;
  std::set<std::string> ids;
  {
    absl::MutexLock lock(&mu);
    ids.insert(seen.begin(), seen.end());
  }
  for (const std::string& id : ids) {
    auto st = scheduler_->Get(id);
    ASSERT_TRUE(st.ok()) << st.status();
    if (!IsTerminalActionState(st->state())) live.insert(id);
  }
  {
    absl::MutexLock lock(&blobs_.mu);
    EXPECT_EQ(blobs_.pins, live);
    for (const std::string& id : live) {
      EXPECT_EQ(blobs_.pinned[id], std::set<std::string>{input_.hash()}) << id;
    }
  }
  // Whatever is still queued can be leased: none was lost from its queue.
  uint32_t queued = 0;
  for (const std::string& id : live) {
    if (scheduler_->Get(id)->state() == farm::v1::ACTION_STATE_QUEUED) ++queued;
  }
  auto rest = scheduler_->Lease("w2", "s2", MakeWorker("w2", "13.0").capabilities(), 1000,
                                absl::ZeroDuration());
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->size(), queued);
}

}  // namespace
}  // namespace farm::coordinator
