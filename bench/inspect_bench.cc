// inspect_bench: how fast `farmctl inspect` reads a ~1 GiB CUDA library, against sha256sum
// of the same file, both from a cold page cache. Inspection must read headers only, so the
// bench also reports how many bytes of the file the inspection pulled into memory.
//
//   inspect_bench [--from OBJECT] [--size-mib N] [--entry-kib N] [--out PATH]
//
// The library is synthesised: an ELF shared object whose .nv_fatbin holds fat-binary
// containers back to back (one per "translation unit", as linked libraries do). Entry headers
// are copied from a real nvcc-built OBJECT when given, so the reader sees what nvcc writes;
// payloads are filler of --entry-kib each (shipped cubins are tens of KiB to MiBs).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "libfarm/coverage/binary_inspector.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/fatbin/device_code.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string from;
  std::string out = "/tmp/wheelfarm_inspect_bench.so";
  uint64_t size_mib = 1024;
  uint64_t entry_kib = 512;
};

template <typename T>
void Put(std::vector<uint8_t>& buf, size_t at, T value) {
  std::memcpy(buf.data() + at, &value, sizeof(T));
}

// 0x40-byte entry headers: from a real object's first container, or made per formats.md.
std::vector<std::vector<uint8_t>> TemplateHeaders(const std::string& from) {
  std::vector<std::vector<uint8_t>> headers;
  if (!from.empty()) {
    auto file = farm::MappedFile::Open(from);
    auto elf = file.ok() ? farm::ElfFile::Parse(file->bytes())
                         : absl::StatusOr<farm::ElfFile>(file.status());
    auto code = elf.ok() ? farm::ReadElfDeviceCode(*elf)
                         : absl::StatusOr<std::vector<farm::DeviceCodeContainer>>(elf.status());
    if (code.ok() && !code->empty()) {
      for (const auto& e : code->back().container.entries) {
        const uint8_t* at = file->bytes().data() + e.offset;
        headers.emplace_back(at, at + e.header_size);
      }
      return headers;
    }
    std::cerr << "inspect_bench: cannot take entry headers from " << from
              << ", synthesising them instead\n";
  }
  for (uint32_t sm : {75u, 80u, 86u, 89u, 90u, 100u, 120u}) {
    std::vector<uint8_t> h(0x40, 0);
    Put<uint16_t>(h, 0x00, 2);
    Put<uint16_t>(h, 0x02, 0x0101);
    Put<uint32_t>(h, 0x04, 0x40);
    Put<uint16_t>(h, 0x18, 8);
    Put<uint16_t>(h, 0x1a, 1);
    Put<uint32_t>(h, 0x1c, sm);
    Put<uint64_t>(h, 0x28, 0x11);
    headers.push_back(h);
  }
  return headers;
}

bool WriteAll(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Writes the library; returns its size or 0 on failure.
uint64_t WriteLibrary(const Options& o, const std::vector<std::vector<uint8_t>>& headers) {
  const int fd = ::open(o.out.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return 0;
  const uint64_t payload = o.entry_kib * 1024;
  const uint64_t data_offset = 4096;
  std::vector<uint8_t> zeros(payload, 0);
  std::vector<uint8_t> pad(data_offset, 0);
  WriteAll(fd, pad.data(), pad.size());  // the ELF header is written last, over this
  uint64_t container_bytes = 16;
  for (const auto& h : headers) container_bytes += h.size() + payload;
  const uint64_t containers = std::max<uint64_t>(1, (o.size_mib << 20) / container_bytes);
  for (uint64_t c = 0; c < containers; ++c) {
    std::vector<uint8_t> header(16, 0);
    Put<uint32_t>(header, 0, farm::kFatbinContainerMagic);
    Put<uint16_t>(header, 4, 1);
    Put<uint16_t>(header, 6, 16);
    Put<uint64_t>(header, 8, container_bytes - 16);
    WriteAll(fd, header.data(), header.size());
    for (auto h : headers) {
      Put<uint64_t>(h, 0x08, payload);  // stored size
      Put<uint32_t>(h, 0x10, 0);        // not compressed: filler is not a zstd frame
      Put<uint64_t>(h, 0x28, (*reinterpret_cast<const uint64_t*>(h.data() + 0x28)) & ~0xa000ull);
      Put<uint64_t>(h, 0x38, 0);
      WriteAll(fd, h.data(), h.size());
      WriteAll(fd, zeros.data(), zeros.size());
    }
  }
  const uint64_t fatbin_size = containers * container_bytes;
  const std::string names = std::string("\0.shstrtab\0.nv_fatbin\0", 22);
  const uint64_t names_offset = data_offset + fatbin_size;
  WriteAll(fd, names.data(), names.size());
  const uint64_t sh_offset = (names_offset + names.size() + 7) & ~7ull;
  std::vector<uint8_t> align(sh_offset - names_offset - names.size(), 0);
  WriteAll(fd, align.data(), align.size());
  std::vector<uint8_t> sections(3 * 64, 0);
  Put<uint32_t>(sections, 64 + 0, 1);  // .shstrtab
  Put<uint32_t>(sections, 64 + 4, 3);
  Put<uint64_t>(sections, 64 + 0x18, names_offset);
  Put<uint64_t>(sections, 64 + 0x20, names.size());
  Put<uint32_t>(sections, 128 + 0, 11);  // .nv_fatbin
  Put<uint32_t>(sections, 128 + 4, 1);
  Put<uint64_t>(sections, 128 + 0x08, 2);  // SHF_ALLOC
  Put<uint64_t>(sections, 128 + 0x10, data_offset);
  Put<uint64_t>(sections, 128 + 0x18, data_offset);
  Put<uint64_t>(sections, 128 + 0x20, fatbin_size);
  WriteAll(fd, sections.data(), sections.size());
  std::vector<uint8_t> elf(64, 0);
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  std::memcpy(elf.data(), ident, sizeof(ident));
  Put<uint16_t>(elf, 0x10, farm::kElfTypeShared);
  Put<uint16_t>(elf, 0x12, farm::kElfMachineX86_64);
  Put<uint32_t>(elf, 0x14, 1);
  Put<uint64_t>(elf, 0x28, sh_offset);
  Put<uint16_t>(elf, 0x34, 64);
  Put<uint16_t>(elf, 0x3a, 64);
  Put<uint16_t>(elf, 0x3c, 3);
  Put<uint16_t>(elf, 0x3e, 1);
  ::pwrite(fd, elf.data(), elf.size(), 0);
  ::fsync(fd);
  struct stat st {};
  ::fstat(fd, &st);
  ::close(fd);
  return static_cast<uint64_t>(st.st_size);
}

// Drops the file from the page cache so the next reader starts cold.
void Evict(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// Bytes of the file currently in the page cache.
uint64_t ResidentBytes(const std::string& path, uint64_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return 0;
  const long page = ::sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> vec((size + page - 1) / page);
  uint64_t resident = 0;
  if (::mincore(map, size, vec.data()) == 0) {
    for (unsigned char v : vec) resident += (v & 1) ? page : 0;
  }
  ::munmap(map, size);
  return resident;
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--from")
      o.from = argv[i + 1];
    else if (flag == "--out")
      o.out = argv[i + 1];
    else if (flag == "--size-mib")
      (void)absl::SimpleAtoi(argv[i + 1], &o.size_mib);
    else if (flag == "--entry-kib")
      (void)absl::SimpleAtoi(argv[i + 1], &o.entry_kib);
  }
  const auto headers = TemplateHeaders(o.from);
  const uint64_t size = WriteLibrary(o, headers);
  if (size == 0) {
    std::cerr << "inspect_bench: cannot write " << o.out << "\n";
    return 1;
  }
  Evict(o.out);
  const uint64_t resident_before = ResidentBytes(o.out, size);

  auto start = Clock::now();
  auto inspection = farm::InspectPath(o.out);
  const double cold = Seconds(start);
  if (!inspection.ok() || inspection->HasErrors() || inspection->files.empty()) {
    std::cerr << "inspect_bench: inspection failed: "
              << (inspection.ok()
                      ? inspection->files.empty() ? "no files" : inspection->files[0].error
                      : std::string(inspection.status().message()))
              << "\n";
    return 1;
  }
  const uint64_t touched = ResidentBytes(o.out, size) - resident_before;
  size_t entries = 0, containers = inspection->files[0].containers.size();
  for (const auto& c : inspection->files[0].containers) entries += c.entries.size();

  start = Clock::now();
  (void)farm::InspectPath(o.out);
  const double warm = Seconds(start);

  Evict(o.out);
  start = Clock::now();
  const std::string command = "sha256sum '" + o.out + "' > /dev/null";
  const int rc = std::system(command.c_str());
  const double sha = Seconds(start);

  const double gb = static_cast<double>(size) / 1e9;
  std::cout << absl::StrFormat(
      "library: %s, %.2f GiB, %d containers, %d entries (%d KiB payload each; headers from %s)\n",
      o.out, static_cast<double>(size) / (1 << 30), containers, entries, o.entry_kib,
      o.from.empty() ? "synthesised" : o.from);
  std::cout << absl::StrFormat(
      "inspect (cold cache): %.3f s = %.1f GB/s; read %.2f MiB of the file (%.3f%%)\n", cold,
      gb / cold, static_cast<double>(touched) / (1 << 20),
      100.0 * static_cast<double>(touched) / static_cast<double>(size));
  std::cout << absl::StrFormat("inspect (warm cache): %.3f s = %.1f GB/s\n", warm, gb / warm);
  std::cout << absl::StrFormat("sha256sum (cold cache): %.3f s = %.2f GB/s%s\n", sha, gb / sha,
                               rc == 0 ? "" : " (sha256sum failed)");
  std::cout << absl::StrFormat("inspect is %.0fx faster than sha256sum of the same file\n",
                               sha / cold);
  std::remove(o.out.c_str());
  return gb / cold >= 1.0 ? 0 : 2;
}
