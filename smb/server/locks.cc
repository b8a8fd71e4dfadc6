// SPDX-License-Identifier: Apache-2.0
#include "locks.h"

#include <algorithm>

#include "nt_status.h"

namespace smb::server {

namespace {

using smb2::kLockExclusive, smb2::kLockFailImmediately, smb2::kLockShared, smb2::kLockUnlock;

// MS-FSA 2.1.5.7: a range whose last byte wraps around is refused.
bool range_valid(const smb2::LockElement& e) {
  return e.length == 0 || e.offset + (e.length - 1) >= e.offset;
}

// Two ranges overlap when they share a byte; a zero-length range shares
// none (it conflicts with nothing, as on Windows for I/O purposes).
bool overlap(uint64_t a, uint64_t al, uint64_t b, uint64_t bl) {
  if (al == 0 || bl == 0) return false;
  const uint64_t a_last = a + (al - 1), b_last = b + (bl - 1);
  return a <= b_last && b <= a_last;
}

}  // namespace

uint32_t LockTable::apply(const File& file, const Owner& owner,
                          std::span<const smb2::LockElement> e) {
  if (e.empty()) return nt::kInvalidParameter;
  std::lock_guard g(mu_);
  if (e[0].flags & kLockUnlock) return unlock_locked(file, owner, e);
  return lock_locked(file, owner, e);
}

uint32_t LockTable::unlock_locked(const File& file, const Owner& owner,
                                  std::span<const smb2::LockElement> e) {
  // 3.3.5.14.1: in order; an element that is not a plain unlock, or names
  // no lock of this open, stops the request (those already done stay done).
  auto f = files_.find(file);
  for (const auto& u : e) {
    if ((u.flags & ~kLockFailImmediately) != kLockUnlock) return nt::kInvalidParameter;
    if (!range_valid(u)) return nt::kInvalidLockRange;
    if (f == files_.end()) return nt::kRangeNotLocked;
    auto& v = f->second;
    auto it = std::find_if(v.begin(), v.end(), [&](const Range& r) {
      return r.owner == owner && r.offset == u.offset && r.length == u.length;
    });
    if (it == v.end()) return nt::kRangeNotLocked;
    v.erase(it);
    if (v.empty()) {
      files_.erase(f);
      f = files_.end();
    }
  }
  return nt::kSuccess;
}

uint32_t LockTable::lock_locked(const File& file, const Owner& owner,
                                std::span<const smb2::LockElement> e) {
  // 3.3.5.14.2: more than one element all need FAIL_IMMEDIATELY; each is a
  // shared or an exclusive lock, optionally FAIL_IMMEDIATELY.
  for (const auto& l : e) {
    const uint32_t kind = l.flags & ~kLockFailImmediately;
    if (kind != kLockShared && kind != kLockExclusive) return nt::kInvalidParameter;
    if (e.size() > 1 && !(l.flags & kLockFailImmediately)) return nt::kInvalidParameter;
    if (!range_valid(l)) return nt::kInvalidLockRange;
  }
  auto& v = files_[file];
  const size_t before = v.size();
  for (const auto& l : e) {
    const bool excl = (l.flags & kLockExclusive) != 0;
    // A lock conflicts with any overlapping exclusive lock (even of the
    // same open: Windows does not merge or upgrade byte-range locks) and,
    // when it is exclusive itself, with any overlapping lock.
    const bool conflict = std::any_of(v.begin(), v.end(), [&](const Range& r) {
      return overlap(r.offset, r.length, l.offset, l.length) && (r.exclusive || excl);
    });
    if (conflict) {
      v.resize(before);  // the request's earlier locks are undone
      if (v.empty()) files_.erase(file);
      return nt::kLockNotGranted;
    }
    v.push_back({l.offset, l.length, excl, owner});
  }
  return nt::kSuccess;
}

void LockTable::release(const Owner& owner) {
  std::lock_guard g(mu_);
  for (auto f = files_.begin(); f != files_.end();) {
    std::erase_if(f->second, [&](const Range& r) { return r.owner == owner; });
    f = f->second.empty() ? files_.erase(f) : std::next(f);
  }
}

size_t LockTable::count() const {
  std::lock_guard g(mu_);
  size_t n = 0;
  for (const auto& [k, v] : files_) n += v.size();
  return n;
}

}  // namespace smb::server
