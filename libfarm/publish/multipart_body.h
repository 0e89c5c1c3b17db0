// A multipart/form-data request body whose file part is read from disk on demand, so a
// multi-GB wheel is uploaded with a Content-Length (servers such as pypiserver's WSGI
// stack refuse chunked uploads) without ever being held in memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace farm {

class MultipartBody {
 public:
  // `boundary` must not occur in any part; empty: a random one.
  explicit MultipartBody(std::string boundary = "");
  ~MultipartBody();
  MultipartBody(const MultipartBody&) = delete;
  MultipartBody& operator=(const MultipartBody&) = delete;

  void AddField(const std::string& name, const std::string& value);
  // Adds the file part; its size is taken now and checked again while reading.
  absl::Status AddFile(const std::string& name, const std::string& filename,
                       const std::string& path);
  // Closes the body; call after the last part and before size() / Read().
  void Finish();

  std::string content_type() const;
  uint64_t size() const { return size_; }
  // Up to `max` bytes of the body starting at `offset`; empty at the end.
  absl::StatusOr<std::string> Read(uint64_t offset, size_t max) const;

 private:
  struct Segment {
    std::string text;  // literal bytes, or
    int fd = -1;       // a file's bytes [0, file_size)
    uint64_t file_size = 0;
    std::string path;
    uint64_t size() const { return fd >= 0 ? file_size : text.size(); }
  };
  void AppendText(const std::string& text);

  std::string boundary_;
  std::vector<Segment> segments_;
  uint64_t size_ = 0;
};

}  // namespace farm
