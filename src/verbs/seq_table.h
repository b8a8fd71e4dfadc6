// SPDX-License-Identifier: Apache-2.0
// verbs/seq_table.h - the records of a connection's posted requests, by
// sequence number (the send queue's ring sequence, the receive counter),
// for the device completion path (verbs_datapath.cc).
//
// Why not a std::map: every request paid a node allocation when posted and
// a free and a tree search when its completion came, under the connection's
// lock, on the consumer's posting and polling paths (docs/verbs.md
// "Performance"). Requests of one queue are numbered in posting order and
// an RC queue completes them in that order, so the live numbers lie in a
// window [lo, hi) that is never wider than the queue's outstanding
// requests: a power-of-two ring indexed by the number holds them, with no
// allocation once it has grown to the queue's depth. Numbers may be left
// out (a request that completed at post time) and records may be taken out
// of order; the ring grows if the window outgrows it, so nothing is lost
// whatever the order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace softndk::verbs {

template <class T>
class SeqTable {
 public:
  // The record of `seq`, created (default-constructed) if it is not there.
  // The reference stays valid until the next insert(), claim() or clear().
  T& insert(uint64_t seq) { return place(seq, true); }
  // The same, but a new record keeps whatever its slot held before: for a
  // caller that overwrites every field it will read (a receive taken
  // straight into the slot), without clearing a large record first.
  T& claim(uint64_t seq) { return place(seq, false); }

  // The record of `seq`, or null.
  T* find(uint64_t seq) {
    if (count_ == 0 || seq < lo_ || seq >= hi_) return nullptr;
    Slot& s = slots_[seq & (slots_.size() - 1)];
    return s.used && s.seq == seq ? &s.value : nullptr;
  }

  // Drops the record of `seq`; false if there was none.
  bool erase(uint64_t seq) {
    if (find(seq) == nullptr) return false;
    slots_[seq & (slots_.size() - 1)].used = false;
    if (--count_ == 0) {
      lo_ = hi_;
      return true;
    }
    // The oldest live number moves up past the records taken already.
    if (seq == lo_)
      while (lo_ < hi_ && !live(lo_)) ++lo_;
    return true;
  }

  // The lowest live number; only when !empty().
  uint64_t oldest() const { return lo_; }

  // fn(seq, const T&) for every record numbered below `seq`, oldest first,
  // each dropped after fn returns: the requests an RC send queue finished
  // before the one whose completion came (unsignaled WQEs, docs/verbs.md
  // "Flags"). fn must not touch the table.
  template <class Fn>
  void retire_before(uint64_t seq, Fn fn) {
    while (count_ != 0 && lo_ < seq) {
      const uint64_t q = lo_;
      fn(q, static_cast<const T&>(slots_[q & (slots_.size() - 1)].value));
      erase(q);
    }
  }

  // The same for the records below `seq` that pred(const T&) accepts; the
  // others stay (a signaled request waits for its own completion: siw
  // completes a Read after the WQEs posted behind it).
  template <class Pred, class Fn>
  void retire_before(uint64_t seq, Pred pred, Fn fn) {
    const uint64_t end = seq < hi_ ? seq : hi_;
    for (uint64_t q = lo_; count_ != 0 && q < end; ++q) {
      if (!live(q)) continue;
      const T& v = slots_[q & (slots_.size() - 1)].value;
      if (!pred(v)) continue;
      fn(q, v);
      erase(q);
    }
  }

  // fn(seq, T&) for every record, oldest (lowest number) first.
  template <class Fn>
  void for_each(Fn fn) {
    for (uint64_t q = lo_; count_ != 0 && q < hi_; ++q)
      if (live(q)) fn(q, slots_[q & (slots_.size() - 1)].value);
  }
  // ... newest first.
  template <class Fn>
  void for_each_reverse(Fn fn) {
    for (uint64_t q = hi_; count_ != 0 && q > lo_; --q)
      if (live(q - 1)) fn(q - 1, slots_[(q - 1) & (slots_.size() - 1)].value);
  }

  void clear() {
    for (Slot& s : slots_) s.used = false;
    count_ = 0;
    lo_ = hi_;
  }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  size_t capacity() const { return slots_.size(); }

 private:
  struct Slot {
    uint64_t seq = 0;
    bool used = false;
    T value{};
  };
  bool live(uint64_t q) const {
    const Slot& s = slots_[q & (slots_.size() - 1)];
    return s.used && s.seq == q;
  }
  T& place(uint64_t seq, bool reset) {
    if (count_ == 0) {
      lo_ = seq;
      hi_ = seq + 1;
    } else {
      if (seq < lo_) lo_ = seq;
      if (seq >= hi_) hi_ = seq + 1;
    }
    if (hi_ - lo_ > slots_.size()) grow(hi_ - lo_);
    Slot& s = slots_[seq & (slots_.size() - 1)];
    if (!(s.used && s.seq == seq)) {
      s.used = true;
      s.seq = seq;
      if (reset) s.value = T{};
      ++count_;
    }
    return s.value;
  }
  // Re-homes the live records into a ring of at least `width` slots.
  void grow(uint64_t width) {
    size_t cap = slots_.empty() ? 16 : slots_.size();
    while (cap < width) cap *= 2;
    std::vector<Slot> next(cap);
    for (Slot& s : slots_)
      if (s.used) next[s.seq & (cap - 1)] = std::move(s);
    slots_.swap(next);
  }

  std::vector<Slot> slots_;   // size 0 or a power of two
  uint64_t lo_ = 0, hi_ = 0;  // every live record's number is in [lo_, hi_)
  size_t count_ = 0;
};

}  // namespace softndk::verbs
