// Giving one section of a relocatable object new contents of another size, laid out as the
// GNU assembler lays out its output: every section in file order, each at the next offset
// its alignment allows, the section header table last. farm-nvcc compiles a host object
// before its fat binary exists and puts the fat binary in afterwards; the result is the
// object the compiler would have written with the fat binary in place.
#pragma once

#include <string>

#include <string_view>
#include "absl/status/statusor.h"

namespace farm {

// `object` with section `name` holding `contents`. FAILED_PRECONDITION when the object is not
// one this can rewrite exactly: not a 64-bit relocatable ELF, no such section or more than
// one, relocations against the section, or a file layout the rule above does not reproduce
// (checked on the object as given, before anything moves). INVALID_ARGUMENT for bytes that
// are not ELF at all.
absl::StatusOr<std::string> ReplaceSectionContents(std::string_view object, std::string_view name,
                                                   std::string_view contents);

}  // namespace farm
