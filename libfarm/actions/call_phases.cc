#include "libfarm/actions/call_phases.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace farm {
namespace {

using google::protobuf::FieldDescriptor;

// Every field of CallPhases is a double phase, in field-number order (the call's order).
std::vector<const FieldDescriptor*> PhaseFields() {
  const auto* descriptor = farm::v1::CallPhases::descriptor();
  std::vector<const FieldDescriptor*> fields;
  for (int i = 0; i < descriptor->field_count(); ++i) fields.push_back(descriptor->field(i));
  std::sort(fields.begin(), fields.end(), [](const FieldDescriptor* a, const FieldDescriptor* b) {
    return a->number() < b->number();
  });
  return fields;
}

const std::vector<const FieldDescriptor*>& Fields() {
  static const auto* fields = new std::vector<const FieldDescriptor*>(PhaseFields());
  return *fields;
}

}  // namespace

std::vector<std::pair<std::string, double>> PhaseList(const farm::v1::CallPhases& phases) {
  const auto* reflection = phases.GetReflection();
  std::vector<std::pair<std::string, double>> out;
  for (const FieldDescriptor* f : Fields()) {
    out.emplace_back(f->name(), reflection->GetDouble(phases, f));
  }
  return out;
}

void AddPhases(farm::v1::CallPhases& into, const farm::v1::CallPhases& add) {
  const auto* reflection = into.GetReflection();
  for (const FieldDescriptor* f : Fields()) {
    reflection->SetDouble(&into, f, reflection->GetDouble(into, f) + reflection->GetDouble(add, f));
  }
}

double PhaseSum(const farm::v1::CallPhases& phases) {
  double sum = 0;
  for (const auto& [name, seconds] : PhaseList(phases)) sum += seconds;
  return sum;
}

void SetOtherToTheRest(farm::v1::CallPhases& phases, double wall_seconds) {
  phases.set_other(0);
  phases.set_other(std::max(0.0, wall_seconds - PhaseSum(phases)));
}

absl::Status CheckPhases(const farm::v1::CallPhases& phases, double max_seconds) {
  for (const auto& [name, seconds] : PhaseList(phases)) {
    if (!std::isfinite(seconds) || seconds < 0 || seconds > max_seconds) {
      return absl::InvalidArgumentError(absl::StrCat("phase '", name, "' of ", seconds,
                                                     " s is not a time from 0 to ", max_seconds,
                                                     " s. Fix: send the seconds the phase took"));
    }
  }
  return absl::OkStatus();
}

std::string LongestPhases(const farm::v1::CallPhases& phases, double min_seconds,
                          size_t max_listed) {
  std::vector<std::pair<std::string, double>> list = PhaseList(phases);
  std::stable_sort(list.begin(), list.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [name, seconds] : list) {
    if (seconds < min_seconds || parts.size() >= max_listed) break;
    parts.push_back(absl::StrFormat("%s %.2f s", name, seconds));
  }
  return absl::StrJoin(parts, ", ");
}

void CallClock::Mark(std::string what, const std::string& phase) {
  const double seconds = timeline_.Mark(std::move(what));
  if (phase.empty() || phase == "other") return;
  const FieldDescriptor* field = farm::v1::CallPhases::descriptor()->FindFieldByName(phase);
  if (field == nullptr) return;  // a misnamed phase lands in "other"
  const auto* reflection = phases_.GetReflection();
  reflection->SetDouble(&phases_, field, reflection->GetDouble(phases_, field) + seconds);
}

void CallClock::AddFarmPhases(const farm::v1::CallPhases& farm) {
  phases_.set_queue(phases_.queue() + farm.queue());
  phases_.set_fetch(phases_.fetch() + farm.fetch());
  phases_.set_run(phases_.run() + farm.run());
  phases_.set_output_upload(phases_.output_upload() + farm.output_upload());
}

farm::v1::CallPhases CallClock::Phases() const {
  farm::v1::CallPhases out = phases_;
  SetOtherToTheRest(out, WallSeconds());
  return out;
}

const std::vector<double>& PhaseHistogramBuckets() {
  static const auto* buckets = new std::vector<double>{
      0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200};
  return *buckets;
}

}  // namespace farm
