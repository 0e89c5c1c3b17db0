#include "libfarm/text/utf8_fields.h"

#include <map>
#include <memory>
#include <set>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "libfarm/text/utf8.h"

namespace farm {
namespace {

namespace pb = google::protobuf;

// Escapes the fields of `message` that `types` (its own descriptor, or the descriptor it was
// made from when `message` is a twin, below) declares as strings; recurses into messages.
int EscapeFields(pb::Message* message, const pb::Descriptor* types) {
  const pb::Reflection* reflection = message->GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  int escaped = 0;
  for (const pb::FieldDescriptor* field : fields) {
    const pb::FieldDescriptor* declared = types->FindFieldByNumber(field->number());
    if (declared == nullptr) continue;
    if (declared->type() == pb::FieldDescriptor::TYPE_STRING) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
          std::string scratch;
          const std::string& value =
              reflection->GetRepeatedStringReference(*message, field, i, &scratch);
          if (IsValidUtf8(value)) continue;
          reflection->SetRepeatedString(message, field, i, ValidUtf8OrEscaped(value));
          ++escaped;
        }
      } else {
        std::string scratch;
        const std::string& value = reflection->GetStringReference(*message, field, &scratch);
        if (IsValidUtf8(value)) continue;
        reflection->SetString(message, field, ValidUtf8OrEscaped(value));
        ++escaped;
      }
    } else if (declared->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
          escaped += EscapeFields(reflection->MutableRepeatedMessage(message, field, i),
                                  declared->message_type());
        }
      } else {
        escaped +=
            EscapeFields(reflection->MutableMessage(message, field), declared->message_type());
      }
    }
  }
  return escaped;
}

// Appends to `out` (up to `max`) the string fields of `message` that are not UTF-8, as
// `types` (its descriptor, or the one its twin was made from) declares them, named from
// `prefix`.
void FindInvalid(const pb::Message& message, const pb::Descriptor* types, const std::string& prefix,
                 size_t max, std::vector<InvalidUtf8Field>& out) {
  const pb::Reflection* reflection = message.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  auto add = [&](std::string path, const std::string& value) {
    if (out.size() < max) {
      out.push_back({std::move(path), std::string(Utf8Prefix(ValidUtf8OrEscaped(value), 128))});
    }
  };
  for (const pb::FieldDescriptor* field : fields) {
    if (out.size() >= max) return;
    const pb::FieldDescriptor* declared = types->FindFieldByNumber(field->number());
    if (declared == nullptr) continue;
    const std::string name = prefix + declared->name();
    if (declared->is_map()) {
      // An entry: key 1, value 2 (a plain repeated message in a twin).
      const pb::FieldDescriptor* key_type = declared->message_type()->map_key();
      const pb::FieldDescriptor* value_type = declared->message_type()->map_value();
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        const pb::Message& entry = reflection->GetRepeatedMessage(message, field, i);
        const pb::Reflection* er = entry.GetReflection();
        const pb::FieldDescriptor* key = entry.GetDescriptor()->FindFieldByNumber(1);
        const pb::FieldDescriptor* value = entry.GetDescriptor()->FindFieldByNumber(2);
        std::string key_text;
        if (key != nullptr && key_type->type() == pb::FieldDescriptor::TYPE_STRING) {
          std::string scratch;
          key_text = er->GetStringReference(entry, key, &scratch);
          if (!IsValidUtf8(key_text)) add(name + " key", key_text);
        }
        const std::string entry_name =
            absl::StrCat(name, "[\"", Utf8Prefix(ValidUtf8OrEscaped(key_text), 64), "\"]");
        if (value == nullptr) continue;
        if (value_type->type() == pb::FieldDescriptor::TYPE_STRING) {
          std::string scratch;
          const std::string& text = er->GetStringReference(entry, value, &scratch);
          if (!IsValidUtf8(text)) add(entry_name, text);
        } else if (value_type->type() == pb::FieldDescriptor::TYPE_MESSAGE &&
                   er->HasField(entry, value)) {
          FindInvalid(er->GetMessage(entry, value), value_type->message_type(), entry_name + ".",
                      max, out);
        }
      }
    } else if (declared->type() == pb::FieldDescriptor::TYPE_STRING) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          std::string scratch;
          const std::string& value =
              reflection->GetRepeatedStringReference(message, field, i, &scratch);
          if (!IsValidUtf8(value)) add(absl::StrCat(name, "[", i, "]"), value);
        }
      } else {
        std::string scratch;
        const std::string& value = reflection->GetStringReference(message, field, &scratch);
        if (!IsValidUtf8(value)) add(name, value);
      }
    } else if (declared->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          FindInvalid(reflection->GetRepeatedMessage(message, field, i), declared->message_type(),
                      absl::StrCat(name, "[", i, "]."), max, out);
        }
      } else {
        FindInvalid(reflection->GetMessage(message, field), declared->message_type(), name + ".",
                    max, out);
      }
    }
  }
}

void TurnStringsIntoBytes(pb::DescriptorProto* type) {
  for (pb::FieldDescriptorProto& field : *type->mutable_field()) {
    if (field.type() == pb::FieldDescriptorProto::TYPE_STRING) {
      field.set_type(pb::FieldDescriptorProto::TYPE_BYTES);
    }
  }
  // A map may not have bytes keys; a map entry without the option is a plain repeated
  // message with the same wire format.
  if (type->has_options()) type->mutable_options()->clear_map_entry();
  for (pb::DescriptorProto& nested : *type->mutable_nested_type()) TurnStringsIntoBytes(&nested);
}

// The descriptors of every message type with each string field made `bytes`, built on first
// use and kept for the process's life.
class BytesTwins {
 public:
  // A prototype of the twin of `type`, or nullptr when it cannot be built.
  const pb::Message* Prototype(const pb::Descriptor* type) {
    absl::MutexLock lock(&mu_);
    AddFile(type->file());
    const pb::Descriptor* twin = pool_.FindMessageTypeByName(type->full_name());
    return twin == nullptr ? nullptr : factory_.GetPrototype(twin);
  }

 private:
  void AddFile(const pb::FileDescriptor* file) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!added_.insert(file->name()).second) return;
    for (int i = 0; i < file->dependency_count(); ++i) AddFile(file->dependency(i));
    pb::FileDescriptorProto proto;
    file->CopyTo(&proto);
    for (pb::DescriptorProto& type : *proto.mutable_message_type()) TurnStringsIntoBytes(&type);
    pool_.BuildFile(proto);
  }

  absl::Mutex mu_;
  pb::DescriptorPool pool_ ABSL_GUARDED_BY(mu_);
  pb::DynamicMessageFactory factory_ ABSL_GUARDED_BY(mu_){&pool_};
  std::set<std::string> added_ ABSL_GUARDED_BY(mu_);
};

BytesTwins& Twins() {
  static BytesTwins* const twins = new BytesTwins();  // never destroyed: used until exit
  return *twins;
}

}  // namespace

int EscapeInvalidUtf8Fields(pb::Message* message) {
  return EscapeFields(message, message->GetDescriptor());
}

std::vector<InvalidUtf8Field> InvalidUtf8Fields(const pb::Message& message, size_t max) {
  std::vector<InvalidUtf8Field> out;
  FindInvalid(message, message.GetDescriptor(), "", max, out);
  return out;
}

std::vector<InvalidUtf8Field> InvalidUtf8FieldsOf(absl::string_view bytes,
                                                  const pb::Descriptor& type, size_t max) {
  const pb::Message* prototype = Twins().Prototype(&type);
  if (prototype == nullptr) return {};
  std::unique_ptr<pb::Message> twin(prototype->New());
  if (!twin->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return {};
  std::vector<InvalidUtf8Field> out;
  FindInvalid(*twin, &type, "", max, out);
  return out;
}

int ParseEscapingInvalidUtf8(absl::string_view bytes, pb::Message* message) {
  if (message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return 0;
  const pb::Message* prototype = Twins().Prototype(message->GetDescriptor());
  if (prototype == nullptr) return -1;
  std::unique_ptr<pb::Message> twin(prototype->New());
  if (!twin->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return -1;
  const int escaped = EscapeFields(twin.get(), message->GetDescriptor());
  if (escaped == 0) return -1;  // every string was UTF-8: the bytes are wrong some other way
  std::string valid;
  if (!twin->SerializeToString(&valid) || !message->ParseFromString(valid)) return -1;
  return escaped;
}

}  // namespace farm
