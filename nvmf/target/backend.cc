// SPDX-License-Identifier: Apache-2.0
// backend.cc - see backend.h.
#include "target/backend.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <vector>

#include "ndkapp/size_text.h"

namespace nvmf::target {

namespace {

std::runtime_error fail(const std::string& what, int err) {
  return std::runtime_error(what + ": " + std::strerror(err));
}

class FdBackend final : public Backend {
 public:
  FdBackend(const std::string& path, bool block) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) throw fail("cannot open " + path, errno);
    struct stat st {};
    if (fstat(fd_, &st) != 0) throw fail("cannot stat " + path, errno);
    if (block) {
      if (!S_ISBLK(st.st_mode)) throw std::runtime_error(path + " is not a block device");
      if (ioctl(fd_, BLKGETSIZE64, &bytes_) != 0) throw fail("BLKGETSIZE64 on " + path, errno);
    } else {
      if (!S_ISREG(st.st_mode)) throw std::runtime_error(path + " is not a regular file");
      bytes_ = static_cast<uint64_t>(st.st_size);
    }
    bytes_ &= ~uint64_t{kBlockSize - 1};
    if (bytes_ == 0) throw std::runtime_error(path + " holds less than one 512-byte block");
    what_ = (block ? "blk:" : "file:") + path;
    block_ = block;
  }
  ~FdBackend() override {
    if (fd_ >= 0) ::close(fd_);
  }
  int read(uint64_t off, void* buf, size_t len) override {
    return io(off, len, [&](size_t done) {
      return ::pread(fd_, static_cast<char*>(buf) + done, len - done, off_t(off + done));
    });
  }
  int write(uint64_t off, const void* buf, size_t len) override {
    return io(off, len, [&](size_t done) {
      return ::pwrite(fd_, static_cast<const char*>(buf) + done, len - done, off_t(off + done));
    });
  }
  int flush() override { return ::fdatasync(fd_) == 0 ? 0 : errno; }
  int zero(uint64_t off, uint64_t len) override {
    if (off > bytes_ || len > bytes_ - off) return ERANGE;
    int mode = block_ ? FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE
                      : FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
    if (::fallocate(fd_, mode, off_t(off), off_t(len)) == 0) return 0;
    // No fallocate support (some file systems, older block drivers):
    // write the zeros.
    static const std::vector<char> zeros(1 << 16, 0);
    for (uint64_t done = 0; done < len;) {
      size_t n = size_t(std::min<uint64_t>(zeros.size(), len - done));
      if (int e = write(off + done, zeros.data(), n)) return e;
      done += n;
    }
    return 0;
  }
  int deallocate(uint64_t off, uint64_t len) override { return zero(off, len); }

 private:
  template <typename F>
  int io(uint64_t off, size_t len, F&& step) {
    if (off > bytes_ || len > bytes_ - off) return ERANGE;
    for (size_t done = 0; done < len;) {
      ssize_t n = step(done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno;
      }
      if (n == 0) return EIO;  // the file shrank under us
      done += size_t(n);
    }
    return 0;
  }
  int fd_ = -1;
  bool block_ = false;
};

class RamBackend final : public Backend {
 public:
  explicit RamBackend(uint64_t bytes) {
    bytes_ = bytes & ~uint64_t{kBlockSize - 1};
    if (bytes_ == 0) throw std::runtime_error("ram namespace smaller than one block");
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw fail("cannot map " + std::to_string(bytes_) + " bytes", errno);
    mem_ = static_cast<uint8_t*>(p);
    what_ = "ram:" + std::to_string(bytes_);
  }
  ~RamBackend() override { munmap(mem_, bytes_); }
  // Queues run on their own threads, and hosts may send overlapping
  // commands on two queues at once. NVMe leaves the data such a pair leaves
  // behind undefined, but two threads copying over the same bytes would be
  // a data race in this process: readers share the lock, writers own it.
  int read(uint64_t off, void* buf, size_t len) override {
    if (off > bytes_ || len > bytes_ - off) return ERANGE;
    std::shared_lock lock(mu_);
    std::memcpy(buf, mem_ + off, len);
    return 0;
  }
  int write(uint64_t off, const void* buf, size_t len) override {
    if (off > bytes_ || len > bytes_ - off) return ERANGE;
    std::unique_lock lock(mu_);
    std::memcpy(mem_ + off, buf, len);
    return 0;
  }
  int flush() override { return 0; }
  int zero(uint64_t off, uint64_t len) override {
    if (off > bytes_ || len > bytes_ - off) return ERANGE;
    std::unique_lock lock(mu_);
    std::memset(mem_ + off, 0, len);
    return 0;
  }
  int deallocate(uint64_t off, uint64_t len) override { return zero(off, len); }

 private:
  uint8_t* mem_ = nullptr;
  std::shared_mutex mu_;
};

uint64_t parse_size(const std::string& s) {
  std::string why;
  auto v = softndk::tools::parse_size(s, &why);  // the tools' one size parser
  if (!v) throw SpecError(why);
  if (*v == 0 || *v > (1ull << 44)) throw SpecError("size out of range: '" + s + "'");
  return *v;
}

}  // namespace

std::unique_ptr<Backend> open_backend(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos)
    throw SpecError("namespace '" + spec + "': expected file:PATH, blk:DEVICE or ram:SIZE");
  std::string kind = spec.substr(0, colon), arg = spec.substr(colon + 1);
  if (arg.empty()) throw SpecError("namespace '" + spec + "': nothing after ':'");
  if (kind == "file") return std::make_unique<FdBackend>(arg, false);
  if (kind == "blk") return std::make_unique<FdBackend>(arg, true);
  if (kind == "ram") return std::make_unique<RamBackend>(parse_size(arg));
  throw SpecError("namespace '" + spec + "': unknown kind '" + kind + "'");
}

}  // namespace nvmf::target
