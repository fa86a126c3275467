// SPDX-License-Identifier: Apache-2.0
// FileReader: open-time validation of an HRRYFILE container (file-format.md
// § Reader Protocol, SPEC-NOTES 9-17), lazy descriptors, zero-copy tensors
// and composites. All byte access goes through detail::FileSource.
#include "hurray/io/file_reader.hpp"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/index_codec.hpp"
#include "io/byte_view.hpp"
#include "io/file_source.hpp"
#include "io/helper_thread.hpp"
#include "io/huge_pages.hpp"
#include "io/index_entry_parse.hpp"
#include "io/kv_section.hpp"

namespace hurray {

namespace {

using detail::char_view;

/// Range sources: the most bytes between the KV section and the index that
/// are read along with them rather than costing a second request.
constexpr uint64_t kRangeMaxGap = 4096;
/// Range sources: descriptors up to this long are fetched whole at open
/// (kPeek, kFull); of a longer one only its first 10 bytes (it is read whole
/// when decoded).
constexpr uint64_t kRangeDescriptorMax = uint64_t{64} * 1024;
/// Range sources: the most descriptor bytes fetched in one batch at open; the
/// descriptors past it are read one by one, as they are needed.
constexpr uint64_t kRangeDescriptorBudget = uint64_t{64} * 1024 * 1024;
/// Range sources: the most padding between a descriptor and its data read
/// along with them, so that a first `tensor(i)` costs one request.
constexpr uint64_t kRangeMaxPadding = uint64_t{2} * 1024 * 1024;

/// Mapped files: an index or KV section of at least this many bytes is read
/// through the mapping, not copied with pread. A pread copy of n bytes costs fresh memory (a page
/// fault per 4 KiB, and glibc maps every allocation past 32 MiB afresh each time);
/// the mapping reads page-cache pages, 16 per fault (fault-around). Measured here for
/// the 1M-tensor file's 113 MB tail: pread into fresh memory 62 ms, through a new
/// mapping 3.4 ms; for 11 MB, 0.46 against 0.22 ms; below 1 MiB the mapping's own
/// cost (mmap + munmap, 12-70 us) dominates.
constexpr uint64_t kMappedSectionsMin = uint64_t{4} * 1024 * 1024;

/// "[a, b)".
std::string range(uint64_t start, uint64_t end) {
    std::string s(1, '[');
    s.append(dec(start)).append(", ").append(dec(end)).push_back(')');
    return s;
}

/// "tensor 'name' (index entry i)".
std::string entry_label(const IndexEntry& e, size_t i) {
    return std::string("tensor '").append(e.name) + "' (index entry " + dec(i) + ")";
}

/// std::allocator whose value-less construct default-initialises, so that
/// `resize` of a vector of integers that is filled next does not zero it first.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
    using value_type = T;
    template <typename U>
    struct rebind {
        using other = DefaultInitAllocator<U>;
    };
    DefaultInitAllocator() noexcept = default;
    template <typename U>
    explicit DefaultInitAllocator(const DefaultInitAllocator<U>& /*other*/) noexcept {}
    template <typename U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

/// One lazily decoded descriptor: written once (under the store's mutex, or
/// at open), read-only after its state is published.
struct DescriptorSlot {
    std::optional<TensorDescriptor> descriptor;
    std::optional<Error> error;
    /// A class's descriptor only (DescriptorClasses): the bytes its buffers span from
    /// an aligned data_offset (buffer 0 there, each next one at the next multiple of
    /// the alignment), which every entry of the class must give as its data_length;
    /// kNoSpan when they do not fit in 64 bits.
    uint64_t span = 0;
    /// A class's descriptor only: it has no buffer, so its entries' data_offset is
    /// not looked at (their data_length must be 0, its span).
    bool unplaced = false;
};

/// DescriptorSlot::span when the buffers do not fit in 64 bits.
constexpr uint64_t kNoSpan = ~uint64_t{0};

/// The decoded descriptors. Slots are allocated in chunks on first use, so
/// that opening a file of a million tensors costs no memory per tensor until
/// its descriptor is asked for; `state[i]` (0 pending, 1 decoded, 2 error) is
/// published with release order after slot `i` is written, and a reader that
/// sees it non-zero with acquire order may read the slot without a lock.
struct DescriptorStore {
    static constexpr size_t kChunk = 512;
    static constexpr uint8_t kPending = 0;
    static constexpr uint8_t kDecoded = 1;
    static constexpr uint8_t kFailed = 2;

    std::unique_ptr<std::atomic<uint8_t>[]>
        state;  // NOLINT(modernize-avoid-c-arrays): atomics cannot move
    std::vector<std::unique_ptr<DescriptorSlot[]>> chunks;  // NOLINT(modernize-avoid-c-arrays)
    std::mutex mutex;                                       // serialises first decodes
    size_t count = 0;                                       // slots

    void reset(size_t n) {
        state = std::make_unique<std::atomic<uint8_t>[]>(
            n);  // NOLINT(modernize-avoid-c-arrays): value-initialised to 0
        chunks.clear();
        chunks.resize((n + kChunk - 1) / kChunk);
        count = n;
    }
    /// A fresh chunk for slot `i`: kChunk slots, or as many as are left (a slot is
    /// ~600 bytes, all of them written when the chunk is made: four classes, as in a
    /// typical model, would otherwise cost 300 KB of zeroing per open).
    [[nodiscard]] std::unique_ptr<DescriptorSlot[]> new_chunk(size_t i) const {  // NOLINT(modernize-avoid-c-arrays)
        const size_t start = i - i % kChunk;
        return std::make_unique<DescriptorSlot[]>(std::min(kChunk, count - start));  // NOLINT(modernize-avoid-c-arrays)
    }
    /// Slot `i`; its chunk must exist (state non-zero, or allocated by `make`).
    [[nodiscard]] DescriptorSlot& slot(size_t i) const { return chunks[i / kChunk][i % kChunk]; }
    /// Slot `i`, allocating its chunk. Caller holds `mutex` (or is alone).
    DescriptorSlot& make(size_t i) {
        auto& chunk = chunks[i / kChunk];
        if (!chunk) {
            chunk = new_chunk(i);
        }
        return chunk[i % kChunk];
    }
    /// Installs `decoded` as slot `i` unless another thread installed one first, and
    /// returns the published state (kDecoded or kFailed). Everything that allocates
    /// happens while no lock is held: this library is built without exceptions, so a
    /// std::bad_alloc unwinding through it (to the C ABI's or the caller's handler)
    /// runs no destructor here, and a lock_guard it passed would keep the mutex locked
    /// for ever.
    uint8_t install(size_t i, DescriptorSlot&& decoded) {
        std::unique_ptr<DescriptorSlot[]> spare;  // NOLINT(modernize-avoid-c-arrays)
        bool chunk_missing = false;
        {
            const std::lock_guard<std::mutex> lock(mutex);
            chunk_missing = !chunks[i / kChunk];
        }
        if (chunk_missing) {
            spare = new_chunk(i);
        }
        const std::lock_guard<std::mutex> lock(mutex);
        uint8_t st = state[i].load(std::memory_order_acquire);
        if (st != kPending) {
            return st;  // another thread installed it meanwhile
        }
        auto& chunk = chunks[i / kChunk];
        if (!chunk) {
            chunk = std::move(spare);  // allocated above: chunks are never freed before the reader
        }
        DescriptorSlot& slot = chunk[i % kChunk];
        slot = std::move(decoded);  // moves only: no allocation under the lock
        st = slot.descriptor ? kDecoded : kFailed;
        state[i].store(st, std::memory_order_release);
        return st;
    }
};

/// Tensors whose descriptors are byte-identical (their copies in the descriptor table,
/// or the descriptors read in place) form a class, decoded and validated once: the
/// layers of a model repeat a few shapes (the 291 tensors of a 7B-like file have 4
/// distinct descriptors), and a decode is a pure function of the bytes and the decode
/// options. What depends on the entry (its data_length and data_offset) is checked per
/// tensor, against the class's span. Filed at open by the one-pass open (with a table),
/// else on the first descriptor asked for; each class decoded on first use.
struct DescriptorClasses {
    /// The class of each tensor.
    std::vector<uint32_t, DefaultInitAllocator<uint32_t>> of;
    /// A tensor of each class (its first in index order), whose bytes are decoded.
    std::vector<uint32_t> first;
    /// How many tensors each class has.
    std::vector<uint32_t> size;
    /// Each class's decoded descriptor (failed: each of its tensors is decoded on its
    /// own, which reports the error with the tensor's context).
    DescriptorStore decoded;
    /// Each class's slot in `decoded` once decoded (null before, and when it failed),
    /// published with release order: listing reads one pointer per tensor.
    std::unique_ptr<std::atomic<const DescriptorSlot*>[]> ready;  // NOLINT(modernize-avoid-c-arrays): atomics cannot move

    /// Sizes `decoded` and `ready` for the classes filed.
    void ready_to_decode() {
        decoded.reset(first.size());
        ready = std::make_unique<std::atomic<const DescriptorSlot*>[]>(first.size());  // NOLINT(modernize-avoid-c-arrays)
    }
};

/// The per-process key of the hashes below: from getrandom, else from addresses and
/// the clock, so that a file cannot be built to make its names or descriptors collide.
uint64_t hash_key() noexcept {
    uint64_t key = 0;
    if (::getrandom(&key, sizeof key, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof key)) {
        key = static_cast<uint64_t>(std::bit_cast<uintptr_t>(&key)) ^
              static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    return key;
}

/// hash_key(), made on first use and the same for the process's life.
uint64_t process_hash_key() noexcept {
    static const uint64_t key = hash_key();
    return key;
}

// 128-bit products, for the folded multiply below (GCC and Clang; __extension__:
// -Wpedantic).
__extension__ using Product128 = unsigned __int128;

/// The folded multiply: the high and low halves of a * b, xored. Every bit of
/// either factor reaches most bits of the result, in one multiplication.
inline uint64_t fold_multiply(uint64_t a, uint64_t b) noexcept {
    const Product128 r = static_cast<Product128>(a) * b;
    return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64U);
}

/// A keyed hash of `n` bytes at `p`: 16 bytes per folded multiply, then the last 16
/// (overlapping) and one more (wyhash's structure). Three dependent multiplications
/// for a 24-byte name, where a hash table's insert waits on its hash; the key (per
/// process, random) keeps a file from choosing names that collide.
/// `key` is process_hash_key(), fetched once by the caller's loop; inlined there (a
/// call and the key's guard were a third of its cost).
[[gnu::always_inline]] inline uint64_t keyed_hash(const uint8_t* p, size_t n, uint64_t key) noexcept {
    constexpr uint64_t kOdd1 = 0xA0761D6478BD642FULL;
    constexpr uint64_t kOdd2 = 0xE7037ED1A0B428DBULL;
    uint64_t seed = key ^ kOdd2;
    uint64_t a = 0;
    uint64_t b = 0;
    if (n <= 16) {
        if (n >= 4) {
            // Two overlapping 4-byte reads from each end (8 when n >= 8): every byte.
            const size_t mid = (n >> 3U) << 2U;
            a = (uint64_t{load_le<uint32_t>(p)} << 32U) | load_le<uint32_t>(p + mid);
            b = (uint64_t{load_le<uint32_t>(p + n - 4)} << 32U) | load_le<uint32_t>(p + n - 4 - mid);
        } else if (n > 0) {
            a = (uint64_t{p[0]} << 16U) | (uint64_t{p[n >> 1U]} << 8U) | p[n - 1];
        }
    } else {
        size_t k = 0;
        for (; n - k > 16; k += 16) {
            seed = fold_multiply(load_le<uint64_t>(p + k) ^ kOdd1, load_le<uint64_t>(p + k + 8) ^ seed);
        }
        a = load_le<uint64_t>(p + n - 16);
        b = load_le<uint64_t>(p + n - 8);
    }
    return fold_multiply(kOdd1 ^ n, fold_multiply(a ^ kOdd1, b ^ seed));
}

/// Whether the copy at `p` (`length` >= 20 bytes, in bounds) opens with the magic, the
/// major version and its own descriptor_length equal to `length` (peek_length's rules,
/// as check_prefix checks a descriptor in place).
bool copy_opens_right(const uint8_t* p, uint32_t length) noexcept {
    return std::memcmp(p, kDescriptorMagic, 4) == 0 && p[4] == kDescriptorVersionMajor &&
           load_le<uint32_t>(p + 6) == length;
}

/// Sorts descriptors into DescriptorClasses, one at a time in index order: a copy
/// equal to the one before it joins its class (one memcmp: the layers of a model come
/// in runs), any other is looked up by its keyed hash.
class ClassBuilder {
public:
    /// For `n` tensors (n < 2^32).
    explicit ClassBuilder(size_t n) : classes_(std::make_unique<DescriptorClasses>()), slots_(64) {
        classes_->of.resize(n);
    }
    /// Files tensor `i`'s descriptor bytes (a view that outlives the builder).
    void add(size_t i, std::span<const uint8_t> copy) {
        DescriptorClasses& c = *classes_;
        if (i > 0 && same_bytes(copy, previous_)) {
            const uint32_t k = c.of[i - 1];
            c.of[i] = k;
            ++c.size[k];
            return;
        }
        previous_ = copy;
        const uint64_t h = keyed_hash(copy.data(), copy.size(), key_);
        const uint64_t tag = h & 0xFFFFFFFF00000000ULL;
        const size_t mask = slots_.size() - 1;
        for (size_t k = static_cast<size_t>(h) & mask;; k = (k + 1) & mask) {
            const uint64_t v = slots_[k];
            if (v == 0) {
                const auto fresh = static_cast<uint32_t>(c.first.size());
                c.first.push_back(static_cast<uint32_t>(i));
                c.size.push_back(1);
                bytes_.push_back(copy);
                hashes_.push_back(h);
                slots_[k] = tag | (uint64_t{fresh} + 1);
                c.of[i] = fresh;
                if (2 * hashes_.size() > slots_.size()) {
                    grow();
                }
                return;
            }
            const auto candidate = static_cast<uint32_t>((v & 0xFFFFFFFFULL) - 1);
            if ((v & 0xFFFFFFFF00000000ULL) == tag) {
                if (same_bytes(bytes_[candidate], copy)) {
                    c.of[i] = candidate;
                    ++c.size[candidate];
                    return;
                }
            }
        }
    }
    /// The classes of every tensor filed, ready to decode.
    std::unique_ptr<DescriptorClasses> take() {
        classes_->ready_to_decode();
        return std::move(classes_);
    }

private:
    /// Whether `a` and `b` hold the same bytes.
    static bool same_bytes(std::span<const uint8_t> a, std::span<const uint8_t> b) noexcept {
        return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
    }
    /// Doubles the slots and files every class again.
    void grow() {
        slots_.assign(2 * slots_.size(), 0);
        const size_t mask = slots_.size() - 1;
        for (size_t c = 0; c < hashes_.size(); ++c) {
            size_t k = static_cast<size_t>(hashes_[c]) & mask;
            while (slots_[k] != 0) {
                k = (k + 1) & mask;
            }
            slots_[k] = (hashes_[c] & 0xFFFFFFFF00000000ULL) | (uint64_t{c} + 1);
        }
    }

    std::unique_ptr<DescriptorClasses> classes_;
    // Open addressing over the classes (load <= 1/2): each slot the class + 1 in its
    // low 32 bits and the top 32 bits of its hash above them.
    std::vector<uint64_t> slots_;
    std::vector<uint64_t> hashes_;                   // of each class's bytes
    std::vector<std::span<const uint8_t>> bytes_;  // each class's bytes
    std::span<const uint8_t> previous_;             // the last copy filed
    uint64_t key_ = process_hash_key();
};

/// What a name table's `build` found (kUnreadable: a name could not be read, see
/// NameSlots::build_by).
enum class NamesBuilt : uint8_t { kUnique, kDuplicate, kNoMemory, kUnreadable };

/// Name -> index position for an unsorted index: open addressing over a
/// power-of-two table of words `W`, each slot the position + 1 (0: empty) in
/// its low bits (24 of a 32-bit word, 40 of a 64-bit one) and as many bits of
/// the name's hash as are left above them (8 or 24), so that a probe compares
/// names only when those bits agree. Lookups allocate nothing.
template <typename W>
class NameSlots {
    static constexpr unsigned kIndexBits = sizeof(W) == 4 ? 24 : 40;
    static constexpr W kIndexMask = static_cast<W>((uint64_t{1} << kIndexBits) - 1);

public:
    /// Entries the table can hold (positions + 1 must fit in the low bits).
    static constexpr uint64_t kMaxEntries = (uint64_t{1} << kIndexBits) - 2;

    /// What `build` found.
    using Built = NamesBuilt;

    /// A keyed hash of `name` (keyed_hash; `key` is process_hash_key()).
    static uint64_t hash(std::string_view name, uint64_t key) noexcept {
        const std::span<const uint8_t> bytes = detail::byte_view(name);
        return keyed_hash(bytes.data(), bytes.size(), key);
    }
    /// Builds the table; kDuplicate when two entries share a name (the
    /// caller reports which, with the full duplicate check).
    Built build(const std::vector<IndexEntry>& entries) {
        return build_by(
            entries.size(), [&](size_t i) { return std::optional<std::string_view>(entries[i].name); },
            [&](size_t j, size_t i) { return entries[j].name == entries[i].name; });
    }
    /// Builds the table for `n` entries: `name_of(i)` is entry i's name, called once
    /// for each i in increasing order (nothing: the build stops, kUnreadable); `same(j,
    /// i)` (j < i) whether entries j and i have the same name, called when a slot's
    /// hash bits agree with entry i's.
    template <typename NameOf, typename Same>
    Built build_by(size_t n, NameOf&& name_of, Same&& same) {
        size_t cap = 16;
        while (cap < 2 * n) {
            cap *= 2;
        }
        // calloc: a large table comes zeroed from the kernel, not memset.
        slots_.reset(static_cast<W*>(std::calloc(cap, sizeof(W))));
        if (!slots_) {
            mask_ = 0;
            return Built::kNoMemory;
        }
        mask_ = cap - 1;
        // A large table misses the cache on nearly every insert: hash
        // kAhead names ahead and prefetch their slots, so that the misses
        // overlap instead of following one another (3x faster at 100k names;
        // 32 ahead rather than 16: -4.5% for open + list of 1M tensors, 64 is
        // slower again).
        constexpr size_t kAhead = 32;
        std::array<uint64_t, kAhead> ahead{};
        const uint64_t key = process_hash_key();
        const auto look_ahead = [&](size_t j) {
            const std::optional<std::string_view> name = name_of(j);
            if (!name) {
                return false;
            }
            const uint64_t h = hash(*name, key);
            ahead[j % kAhead] = h;
            __builtin_prefetch(&slots_[static_cast<size_t>(h) & mask_], 1);
            return true;
        };
        for (size_t j = 0; j < n && j < kAhead; ++j) {
            if (!look_ahead(j)) {
                return Built::kUnreadable;
            }
        }
        for (size_t i = 0; i < n; ++i) {
            const uint64_t h = ahead[i % kAhead];
            if (i + kAhead < n && !look_ahead(i + kAhead)) {
                return Built::kUnreadable;
            }
            for (size_t k = static_cast<size_t>(h) & mask_;; k = (k + 1) & mask_) {
                const W v = slots_[k];
                if (v == 0) {
                    slots_[k] = static_cast<W>((tag(h) << kIndexBits) | (i + 1));
                    break;
                }
                if ((v >> kIndexBits) == tag(h) && same(static_cast<size_t>((v & kIndexMask) - 1), i)) {
                    return Built::kDuplicate;
                }
            }
        }
        return Built::kUnique;
    }
    /// The position of `name`, if present.
    [[nodiscard]] std::optional<size_t> find(const std::vector<IndexEntry>& entries,
                                             std::string_view name) const noexcept {
        if (!slots_) {
            return std::nullopt;
        }
        const uint64_t h = hash(name, process_hash_key());
        for (size_t k = static_cast<size_t>(h) & mask_;; k = (k + 1) & mask_) {
            const W v = slots_[k];
            if (v == 0) {
                return std::nullopt;
            }
            if ((v >> kIndexBits) == tag(h) && entries[(v & kIndexMask) - 1].name == name) {
                return static_cast<size_t>((v & kIndexMask) - 1);
            }
        }
    }

private:
    /// The hash's top bits, as many as the slot leaves above the position (8 or 24).
    static uint64_t tag(uint64_t h) noexcept { return h >> (64U - (8 * sizeof(W) - kIndexBits)); }

    struct Free {
        void operator()(W* p) const noexcept { std::free(p); }
    };
    std::unique_ptr<W[], Free> slots_;  // NOLINT(modernize-avoid-c-arrays): calloc'd, mask_ + 1 slots
    size_t mask_ = 0;
};

/// The name table of an unsorted index: 32-bit slots (half the memory, and as
/// many more of them in the cache) for up to 16,777,214 entries, 64-bit ones
/// beyond.
class NameTable {
public:
    /// Entries the table can hold.
    static constexpr uint64_t kMaxEntries = NameSlots<uint64_t>::kMaxEntries;
    /// What `build` found.
    using Built = NamesBuilt;

    /// Builds the table; kDuplicate when two entries share a name.
    Built build(const std::vector<IndexEntry>& entries) {
        wide_ = entries.size() > NameSlots<uint32_t>::kMaxEntries;
        return wide_ ? wide_slots_.build(entries) : narrow_slots_.build(entries);
    }
    /// NameSlots::build_by.
    template <typename NameOf, typename Same>
    Built build_by(size_t n, NameOf&& name_of, Same&& same) {
        wide_ = n > NameSlots<uint32_t>::kMaxEntries;
        return wide_ ? wide_slots_.build_by(n, name_of, same) : narrow_slots_.build_by(n, name_of, same);
    }
    /// The position of `name`, if present.
    [[nodiscard]] std::optional<size_t> find(const std::vector<IndexEntry>& entries,
                                             std::string_view name) const noexcept {
        return wide_ ? wide_slots_.find(entries, name) : narrow_slots_.find(entries, name);
    }

private:
    NameSlots<uint32_t> narrow_slots_;
    NameSlots<uint64_t> wide_slots_;
    bool wide_ = false;
};

/// What a second thread does beside the index pass (FileReadOptions::parallel_open):
/// the name table, the names read from the index's bytes (each entry is its name's
/// 2-byte length, the name, 32 bytes of fixed fields), not from the entries the other
/// thread is writing; and, as it goes, the index's CRC-32C.
struct NamesBeside {
    std::span<const uint8_t> index;  // the whole section, count first
    size_t count = 0;                // its entries
    NameTable* table = nullptr;      // written by run only, until joined
    bool with_crc = false;           // compute `crc`
    NamesBuilt built = NamesBuilt::kNoMemory;
    std::optional<uint32_t> crc;  // of the whole index, when with_crc and the names were read

    /// The job (HelperThread): builds `*table`.
    static void run(void* self) noexcept { static_cast<NamesBeside*>(self)->build(); }

private:
    void build() noexcept {
        // Where each name starts in the index, for the comparisons of names whose
        // hash bits agree (their entries are being written by the other thread).
        std::vector<uint32_t, DefaultInitAllocator<uint32_t>> name_at(count);
        size_t at = 8;
        uint32_t sum = 0;
        size_t summed = 0;  // the CRC covers [0, summed): a block at a time, while cached
        const auto sum_to = [&](size_t end) {
            sum = crc32c_extend(sum, index.subspan(summed, end - summed));
            summed = end;
        };
        constexpr size_t kCrcBlock = size_t{16} * 1024;
        built = table->build_by(
            count,
            [&](size_t i) -> std::optional<std::string_view> {  // i = 0, 1, ... in turn
                // SAFETY: the 2-byte length, the name and the fixed fields after it
                // are proved to lie inside `index` before the name is viewed.
                if (index.size() - at < detail::kMinIndexEntrySize) {
                    return std::nullopt;
                }
                const size_t length = load_le<uint16_t>(index.data() + at);
                if (index.size() - at - 2 < length + (kIndexEntryFixedSize - 2)) {
                    return std::nullopt;
                }
                name_at[i] = static_cast<uint32_t>(at);  // index.size() <= UINT32_MAX
                at += 2 + length + (kIndexEntryFixedSize - 2);
                if (with_crc && at - summed >= kCrcBlock) {
                    sum_to(at);
                }
                return name_from(name_at[i]);
            },
            [&](size_t j, size_t i) { return name_from(name_at[j]) == name_from(name_at[i]); });
        if (with_crc && built == NamesBuilt::kUnique) {
            sum_to(index.size());
            crc = sum;
        }
    }
    /// The name of the entry at `at` (inside `index`, checked by build).
    [[nodiscard]] std::string_view name_from(size_t at) const noexcept {
        return detail::char_view(index.subspan(at + 2, load_le<uint16_t>(index.data() + at)));
    }
};

/// (key, position) pairs sorted by key: an LSD radix sort on the bytes of
/// the key that vary (offsets aligned to pages and bounded by the file size
/// vary in few), O(n) where a comparison sort is O(n log n).
void radix_sort(std::vector<std::pair<uint64_t, size_t>>& v) {
    if (v.size() < 64) {
        std::sort(v.begin(), v.end());
        return;
    }
    uint64_t all_or = 0;
    uint64_t all_and = ~uint64_t{0};
    for (const auto& p : v) {
        all_or |= p.first;
        all_and &= p.first;
    }
    const uint64_t varying = all_or ^ all_and;
    std::vector<std::pair<uint64_t, size_t>> tmp(v.size());
    for (unsigned shift = 0; shift < 64; shift += 8) {
        if (((varying >> shift) & 0xFFU) == 0) {
            continue;
        }
        std::array<size_t, 257> count{};
        for (const auto& p : v) {
            ++count[((p.first >> shift) & 0xFFU) + 1];
        }
        for (size_t b = 1; b < count.size(); ++b) {
            count[b] += count[b - 1];
        }
        for (const auto& p : v) {
            tmp[count[(p.first >> shift) & 0xFFU]++] = p;
        }
        v.swap(tmp);
    }
}

/// A non-empty byte range of the file, for the overlap check.
struct Region {
    enum class Kind : uint8_t { kHeader, kDescriptor, kData, kKv, kIndex, kTrailer };
    uint64_t start = 0;
    uint64_t end = 0;
    Kind kind = Kind::kHeader;
    size_t entry = 0;  // for descriptors and data
};

std::string region_label(const Region& r, const std::vector<IndexEntry>& entries) {
    std::string what;
    switch (r.kind) {
        case Region::Kind::kHeader:
            what = "file header";
            break;
        case Region::Kind::kDescriptor:
            what = std::string("tensor '").append(entries[r.entry].name) + "' descriptor";
            break;
        case Region::Kind::kData:
            what = std::string("tensor '").append(entries[r.entry].name) + "' data";
            break;
        case Region::Kind::kKv:
            what = "KV section";
            break;
        case Region::Kind::kIndex:
            what = "index";
            break;
        case Region::Kind::kTrailer:
            what = "trailer";
            break;
    }
    return what + " " + range(r.start, r.end);
}

/// Calls `f(k, start)` with the absolute start of every buffer `k` of `d`
/// when its data begins at `data_offset`: buffer 0 there, each next one at
/// the first multiple of `alignment` after the end of the previous one.
/// Returns the end of the last buffer; nothing when a position does not fit
/// in 64 bits. Allocates nothing.
template <typename F>
std::optional<uint64_t> for_each_buffer_start(const TensorDescriptor& d, uint64_t data_offset,
                                              uint64_t alignment, F&& f) {
    uint64_t pos = data_offset;
    for (size_t k = 0; k < d.buffers.size(); ++k) {
        if (k > 0) {
            auto aligned = align_up(pos, alignment);
            if (!aligned) {
                return std::nullopt;
            }
            pos = *aligned;
        }
        f(k, pos);
        auto next = add_u64(pos, d.buffers[k].byte_size);
        if (!next) {
            return std::nullopt;
        }
        pos = *next;
    }
    return pos;
}

/// The end of the last buffer of `d` (see for_each_buffer_start).
std::optional<uint64_t> buffers_end(const TensorDescriptor& d, uint64_t data_offset,
                                    uint64_t alignment) {
    return for_each_buffer_start(d, data_offset, alignment, [](size_t, uint64_t) {});
}

}  // namespace

// ---------------------------------------------------------------------------
// Impl
// ---------------------------------------------------------------------------

// Hidden although FileReader is exported: a nested class takes its visibility
// from the enclosing one, and nothing outside libhurray_io may call it.
struct HURRAY_IO_NO_EXPORT FileReader::Impl {
    FileReadOptions options;
    DecodeOptions decoding;  // decode_options()
    // Owned copies of the spans in options.descriptor (they point here).
    std::vector<uint64_t> known_layouts;
    std::vector<uint8_t> known_schemes;
    detail::FileSource source;
    FileHeader header;
    FileTrailer trailer;
    uint64_t trailer_offset = 0;
    bool has_kv = false;
    KvMetadata kv;
    // The index section's bytes (a view into the mapping, or an owned copy
    // read with pread): the entries' names point into them.
    SharedBuffer index_bytes;
    std::vector<IndexEntry> entries;
    // Index positions by descriptor_offset, and its inverse; both empty when the index
    // is in file order (the usual case: the writer appends entries as it writes
    // tensors), where they are the identity: ordered(k) and position(i) read them.
    // A file of 1M tensors then allocates and writes no 16 MB for them at open.
    std::vector<size_t, DefaultInitAllocator<size_t>> write_order;
    std::vector<size_t, DefaultInitAllocator<size_t>> write_position;
    // The identity, built on the first call of FileReader::write_order() when
    // write_order is empty.
    mutable std::vector<size_t> identity_order;
    mutable std::once_flag identity_once;
    /// Index position of the k-th entry in write order.
    [[nodiscard]] size_t ordered(size_t k) const noexcept { return write_order.empty() ? k : write_order[k]; }
    /// Position in write order of index entry `i`.
    [[nodiscard]] size_t position(size_t i) const noexcept { return write_position.empty() ? i : write_position[i]; }
    bool sorted = false;
    // Whether the names are in strictly ascending byte order: SORTED_INDEX, or seen so
    // at open in an index without the flag. Unique then, and found by binary search
    // (no name table).
    bool ascending = false;
    NameTable by_name;      // unsorted index only
    DescriptorStore store;  // decoded descriptors
    // The descriptor table (hurray/io/descriptor_table.hpp), when the file has a
    // well-formed one: its value's bytes and where each entry's copy starts in them.
    // Descriptors are decoded from these copies; in_place[i] turns 1 once copy i was
    // found equal to the descriptor in place, which comes before any of tensor i's
    // data is handed out.
    // Local files without a table (kPeek, kFull) get the same arrangement from
    // read_descriptors: the descriptors preaded into `table`, every in_place[i] 1 (the
    // copies were read from their place), and table_in_file false.
    // `table` is a view of the KV section as read (its pread copy, or a slice of the
    // range source's window or of the caller's memory), which it keeps alive: the
    // table is not copied again.
    SharedBuffer table;
    std::vector<uint64_t, DefaultInitAllocator<uint64_t>> table_at;
    bool table_in_file = false;
    std::unique_ptr<std::atomic<uint8_t>[]> in_place;  // NOLINT(modernize-avoid-c-arrays): atomics cannot move
    // Descriptor classes (DescriptorClasses), when the copies are in `table` and
    // decoded from there (shares_decodes()): filed by load_in_one_pass, else built on
    // the first descriptor asked for; null until then, and when no classes are built
    // (more than 2^32 - 1 tensors).
    std::unique_ptr<DescriptorClasses> class_storage;
    std::atomic<DescriptorClasses*> classes{nullptr};
    std::mutex classes_mutex;  // guards class_storage
    // Without a mapping (pread), each tensor's data region as first read, kept
    // until the file is closed so that it lives as long as mapped data would.
    // Empty for in-memory files, and for mapped ones unless their mapping failed (sized then, on first use).
    std::vector<SharedBuffer> data_cache;
    std::mutex data_mutex;  // guards data_cache

    Result<SharedBuffer> data_region(size_t i);

    static Result<FileReader> open(detail::FileSource source, const FileReadOptions& options);
    Status load();
    /// The usual file in one pass over its index (and its descriptor table), after the
    /// index's CRC: its KV section decoded, then each entry parsed (common form),
    /// checked (check_entries), its regions swept in file order (overlaps), its name
    /// compared with the one before, its copy in the table peeked at and filed in its
    /// class, before the next entry is read; then the names go into the name table
    /// unless they were ascending. True when the file passed
    /// every check: entries, kv, names, the table and its classes are set. False when
    /// anything is unusual or wrong (an index out of file order, an entry of the rarer
    /// form, any failed check): nothing is set, and load runs the checks one after
    /// another, which report the first error.
    bool load_in_one_pass(uint64_t tensor_region_end, bool with_crc);
    /// The end of load, either way: the store, the data cache, the descriptors read in
    /// place when there is no table.
    Status finish_load();
    /// A section of the file: a view of the mapping when the file is mapped and the
    /// section is large (kMappedSectionsMin), otherwise a pread copy.
    Result<SharedBuffer> read_section(uint64_t offset, uint64_t length, const char* what) const {
        return source.kind() == detail::FileSource::Kind::kMapped && length >= kMappedSectionsMin
                   ? source.read(offset, length, what)
                   : source.read_copy(offset, length, what);
    }
    Status check_sections();
    /// Range sources: the header, the index and the KV section in one
    /// `read_ranges` call, located by the trailer in the tail window (which
    /// is not validated here: `load` checks every byte as usual, and reports
    /// what is wrong exactly as for a local file); of each, only the part
    /// the tail window does not hold (prefetch_many cuts a range where the
    /// window begins). Nothing when the trailer does not decode.
    Status prefetch_sections();
    /// Range sources, `kPeek` and `kFull`: every descriptor in one
    /// `read_ranges` call (within kRangeDescriptorBudget bytes), for the
    /// entries whose descriptor lies plausibly in the tensor region.
    Status prefetch_descriptors(uint64_t tensor_region_end);
    /// Range sources with a descriptor table: before every copy is compared with its
    /// descriptor in place (check_all, `kFull`), those descriptors not compared yet in
    /// one `read_ranges` call (within kRangeDescriptorBudget bytes), not one request each.
    Status prefetch_in_place();
    /// Range sources: tensor `i`'s descriptor and data region in one read, the
    /// descriptor decoded from it and the data kept, when neither is yet.
    /// Errors are those of the read (the caller reports them).
    Status fetch_tensor(size_t i);
    /// Absolute file offset of index entry `i` (its name_length field),
    /// from where its name lies in index_bytes.
    [[nodiscard]] uint64_t entry_offset(size_t i) const noexcept;
    /// entry_offset of every entry (for the errors of check_index_names).
    [[nodiscard]] std::vector<uint64_t> entry_offsets() const;
    Status check_names();
    Status check_entries(uint64_t tensor_region_end);
    /// The descriptor's magic and length; from `bytes` (its first bytes,
    /// already read) when not empty, else read here.
    [[nodiscard]] Status check_prefix(size_t i, std::span<const uint8_t> bytes = {}) const;
    /// Whether the regions, visited in write_order, are the sorted sweep of
    /// check_overlaps and none overlaps (false: run check_overlaps).
    [[nodiscard]] bool overlaps_in_file_order() const;
    Status check_overlaps() const;
    Status decode_all();
    /// Decodes descriptor `i` into `slot`, from `given` (its bytes, already
    /// read) when not empty.
    void decode_descriptor(size_t i, DescriptorSlot& slot, const SharedBuffer& given = {}) const;
    /// Decodes and checks descriptor `i` into `out` (its storage reused; unspecified
    /// on error), from `given` (its bytes, already read) when not empty.
    [[nodiscard]] Status decode_into(size_t i, TensorDescriptor& out, const SharedBuffer& given = {}) const;
    /// Decodes descriptor `i` unless done (from `given` when not empty);
    /// returns its published state.
    uint8_t ensure_decoded(size_t i, const SharedBuffer& given = {});
    [[nodiscard]] Status check_against_entry(size_t i, const TensorDescriptor& d) const;
    /// check_against_entry's common case, decided inline: one buffer holding exactly
    /// entry `i`'s data, at an aligned data_offset (the header's alignment is a power
    /// of two: check_file_header).
    [[nodiscard]] bool one_buffer_fits(size_t i, const TensorDescriptor& d) const noexcept {
        const IndexEntry& e = entries[i];
        return d.buffers.size() == 1 && d.buffers[0].byte_size == e.data_length &&
               (e.data_offset & (uint64_t{header.data_buffer_alignment} - 1)) == 0;
    }
    /// Keeps the descriptor table (`value`, the payload of its KV entry, a view of
    /// `kv_bytes`) when it is well formed for this index, each copy's own magic and
    /// length included; otherwise the descriptors in place are read, as without a table.
    void take_table(const SharedBuffer& kv_bytes, std::span<const uint8_t> value);
    /// Local files (mapped or pread) without a table: every descriptor read with one
    /// pread each, in file order, into `table`, and each one's magic and length
    /// checked, so that listing never faults a page of the mapping (which then
    /// serves data only). Runs after the overlap check: the copies fit in the file.
    Status read_descriptors();
    [[nodiscard]] bool has_table() const noexcept { return !table_at.empty(); }
    /// Whether descriptors are decoded from the copies in `table` (a descriptor table,
    /// or the descriptors preaded at open), so that byte-identical ones share a class.
    [[nodiscard]] bool shares_decodes() const noexcept {
        return has_table() && options.descriptors != DescriptorCheck::kLazy;
    }
    /// The descriptor classes, built by the first caller (shares_decodes()); null when
    /// none can be built.
    DescriptorClasses* descriptor_classes();
    /// Class `c`'s slot, its descriptor decoded on first use; null when it does not
    /// decode.
    const DescriptorSlot* class_descriptor(DescriptorClasses& cls, uint32_t c) const;
    /// Tensor `i`'s descriptor as its class's, when the class decodes and entry `i`
    /// agrees with it; null otherwise (then the per-tensor path decides, and reports).
    const TensorDescriptor* shared_descriptor(size_t i);
    /// FileReader::descriptor beyond its inline case (a class decoded already).
    [[gnu::noinline]] Result<const TensorDescriptor*> descriptor_slow(size_t i);
    /// Whether entry `i` agrees with its class's descriptor `t` (check_against_entry's
    /// rules, from the class's span).
    [[nodiscard]] bool fits_class(size_t i, const DescriptorSlot& t) const noexcept {
        const IndexEntry& e = entries[i];
        // No buffer: data_length 0 (the span), any data_offset. Buffers: data_length
        // their span (never kNoSpan: the index bounds it by the file), data_offset
        // aligned.
        return e.data_length == t.span && t.span != kNoSpan &&
               (t.unplaced || (e.data_offset & (uint64_t{header.data_buffer_alignment} - 1)) == 0);
    }
    /// Whether load reads the descriptors with read_descriptors (no table in the file).
    [[nodiscard]] bool preads_descriptors() const noexcept {
        const auto k = source.kind();
        return options.descriptors != DescriptorCheck::kLazy && !table_in_file &&
               (k == detail::FileSource::Kind::kMapped || k == detail::FileSource::Kind::kPread);
    }
    /// Entry `i`'s copy in the table (has_table()).
    [[nodiscard]] std::span<const uint8_t> table_copy(size_t i) const noexcept {
        return table.span().subspan(static_cast<size_t>(table_at[i]), entries[i].descriptor_length);
    }
    /// With a table: whether entry `i`'s copy equals the descriptor in place (`bytes`,
    /// when already read), read here unless known; an error naming the tensor and both
    /// places when it does not. Success without a table.
    [[nodiscard]] Status check_in_place(size_t i, std::span<const uint8_t> bytes = {}) const;
    /// The options descriptors are decoded with: options.descriptor, strict when
    /// both the file and the descriptors are (set once by open).
    [[nodiscard]] const DecodeOptions& decode_options() const noexcept { return decoding; }
    /// Decodes `view` (entry `i`'s descriptor, or its copy in the table when
    /// `from_table`) into `out`, then checks it against the entry.
    [[nodiscard]] Status decode_view(size_t i, std::span<const uint8_t> view, bool from_table,
                                     TensorDescriptor& out) const;
    [[nodiscard]] bool strict_descriptors() const {
        return options.strict && options.descriptor.strict;
    }
};

Result<FileReader> FileReader::Impl::open(detail::FileSource source,
                                          const FileReadOptions& options) {
    auto impl = std::make_shared<Impl>();
    impl->options = options;
    impl->known_layouts.assign(options.descriptor.known_extension_layouts.begin(),
                               options.descriptor.known_extension_layouts.end());
    impl->known_schemes.assign(options.descriptor.known_private_schemes.begin(),
                               options.descriptor.known_private_schemes.end());
    impl->options.descriptor.known_extension_layouts = impl->known_layouts;
    impl->options.descriptor.known_private_schemes = impl->known_schemes;
    impl->decoding = impl->options.descriptor;
    impl->decoding.strict = impl->strict_descriptors();
    impl->source = std::move(source);
    if (auto loaded = impl->load(); !loaded) {
        // A file cut while it was being checked reads as zeros past the cut:
        // report the change, not the corruption it looks like.
        HURRAY_RETURN_IF_ERROR(impl->source.check_unchanged());
        return std::move(loaded).error();
    }
    if (impl->options.descriptors == DescriptorCheck::kFull) {
        if (auto all = impl->decode_all(); !all) {
            HURRAY_RETURN_IF_ERROR(impl->source.check_unchanged());
            return std::move(all).error();
        }
        HURRAY_RETURN_IF_ERROR(impl->prefetch_in_place());
        for (size_t k = 0; k < impl->entries.size(); ++k) {  // every copy against its descriptor in place
            HURRAY_RETURN_IF_ERROR(impl->check_in_place(impl->ordered(k)));
        }
    }
    if (impl->options.access != AccessPattern::kNormal) {
        HURRAY_RETURN_IF_ERROR(impl->source.advise(0, impl->source.size(), impl->options.access));
    }
    return FileReader(std::move(impl));
}

Result<SharedBuffer> FileReader::Impl::data_region(size_t i) {
    const IndexEntry& e = entries[i];
    SharedBuffer read;
    if (source.contiguous()) {
        HURRAY_ASSIGN_OR_RETURN(read, source.read(e.data_offset, e.data_length, "tensor data"));
        if (source.contiguous()) {
            return read;  // a slice of the mapping (made by this first access) or of memory
        }
        // The mapping failed on this first access: `read` is a pread copy, kept below as
        // every pread read is (data_cache is sized on this first use).
    }
    {
        const std::lock_guard<std::mutex> lock(data_mutex);
        if (data_cache.empty()) {
            data_cache.resize(entries.size());
        }
        if (!data_cache[i].empty()) {
            return data_cache[i];
        }
    }
    // Read outside the lock (other tensors may be read meanwhile); the first
    // read installed is the one every caller shares. Errors are not kept.
    if (read.empty()) {
        HURRAY_ASSIGN_OR_RETURN(read, source.read(e.data_offset, e.data_length, "tensor data"));
    }
    const std::lock_guard<std::mutex> lock(data_mutex);
    if (data_cache[i].empty()) {
        data_cache[i] = std::move(read);
    }
    return data_cache[i];
}

Status FileReader::Impl::load() {
    const uint64_t size = source.size();

    // Range sources: the tail of the file in one request (by default the
    // trailer alone; with a larger range_tail_bytes, for most small files the
    // index and KV too, or the whole file), kept while the file is open.
    // The bytes are checked below exactly as if read separately.
    const uint64_t tail_window = std::max(options.range_tail_bytes, kFileTrailerSize);
    HURRAY_RETURN_IF_ERROR(source.prefetch(size - std::min(size, tail_window), tail_window, true));
    HURRAY_RETURN_IF_ERROR(prefetch_sections());

    // Mapped files: the header and trailer are read with pread (read_copy), not
    // through the mapping, and so are the KV section and index unless they are large
    // (kMappedSectionsMin): a first touch of a mapping costs a page fault plus its
    // page tables (60-100 us here against ~2 us for a pread of the same bytes), and
    // listing a small file never maps it (the mapping is made on the first access to
    // tensor data). Large sections are read through it: cheaper than fresh memory.

    // 1-2. Header, then the smallest possible file.
    HURRAY_ASSIGN_OR_RETURN(
        SharedBuffer header_bytes,
        source.read_copy(0, std::min<uint64_t>(size, kFileHeaderSize), "file header"));
    HURRAY_ASSIGN_OR_RETURN(header, decode_file_header(header_bytes.span()));
    if (size < kFileHeaderSize + kFileTrailerSize) {
        return Error(ErrorCode::kTruncated,
                     "file: " + dec(size) +
                         " bytes, shorter than the 64-byte header plus the 40-byte trailer",
                     size);
    }

    // 3. Trailer (its magic first).
    trailer_offset = size - kFileTrailerSize;
    HURRAY_ASSIGN_OR_RETURN(SharedBuffer trailer_bytes,
                            source.read_copy(trailer_offset, kFileTrailerSize, "trailer"));
    HURRAY_ASSIGN_OR_RETURN(trailer, decode_file_trailer(trailer_bytes.span(), trailer_offset));

    HURRAY_RETURN_IF_ERROR(check_sections());

    // Range sources: the index and the KV section in one request when they
    // are adjacent (the writer puts them side by side), unless the windows
    // hold them (prefetch_sections fetched them unless the trailer was
    // unreadable there). Only what no window holds; dropped when open returns.
    if (has_kv) {
        const uint64_t lo = std::min(trailer.kv_offset, trailer.index_offset);
        const uint64_t hi = std::max(trailer.kv_offset + trailer.kv_length,  // checked by check_sections
                                     trailer.index_offset + trailer.index_length);
        const uint64_t gap = hi - lo - trailer.kv_length - trailer.index_length;  // <= hi - lo: no overlap
        if (gap <= kRangeMaxGap) {
            HURRAY_RETURN_IF_ERROR(source.prefetch(lo, hi - lo, false));
        }
    }

    // Mapped files: a large section (kMappedSectionsMin) is a view of the mapping,
    // a smaller one a pread copy.
    // Should the file be cut under the mapping, a view's vanished pages read as
    // zeros, as data would (names included: they point into the index): memory stays
    // valid, and check_unchanged reports the change.

    // The index: one read of the whole section. Its CRC-32C is checked before
    // anything read from it is kept: by the one-pass open (on the thread beside it
    // when there is one), else first thing below.
    HURRAY_ASSIGN_OR_RETURN(index_bytes, read_section(trailer.index_offset, trailer.index_length, "index"));
    const bool with_crc = (header.flags & file_flags::kHasIndexCrc32c) != 0;
    if (!with_crc && trailer.index_crc32c != 0 && options.strict) {
        return Error(ErrorCode::kInvalidFile,
                     "index_crc32c: " + hex(trailer.index_crc32c, 8) +
                         " must be 0 when HAS_INDEX_CRC32C (file_flags bit 2) is clear",
                     trailer_offset + trailer_field::kIndexCrc32c);
    }

    sorted = (header.flags & file_flags::kSortedIndex) != 0;
    uint64_t tensor_region_end = trailer.index_offset;
    if (has_kv) {
        tensor_region_end = std::min(tensor_region_end, trailer.kv_offset);
    }
    if (load_in_one_pass(tensor_region_end, with_crc)) {
        HURRAY_RETURN_IF_ERROR(prefetch_descriptors(tensor_region_end));
        if (options.descriptors != DescriptorCheck::kLazy && !has_table() && !preads_descriptors()) {
            for (size_t i = 0; i < entries.size(); ++i) {  // check_entries' last check
                HURRAY_RETURN_IF_ERROR(check_prefix(i));
            }
        }
        return finish_load();
    }
    // Anything unusual (or wrong): the checks one after another, which report the
    // first error of the file.
    by_name = NameTable{};  // what the one-pass open may have built
    if (with_crc) {
        const uint32_t computed = crc32c(index_bytes.span());
        if (computed != trailer.index_crc32c) {
            return Error(
                ErrorCode::kChecksumMismatch,
                "index_crc32c: stored " + hex(trailer.index_crc32c, 8) + ", computed " +
                    hex(computed, 8) + " over the index " +
                    range(trailer.index_offset, trailer.index_offset + trailer.index_length),
                trailer_offset + trailer_field::kIndexCrc32c);
        }
    }
    HURRAY_ASSIGN_OR_RETURN(entries, decode_index(index_bytes.span(), trailer.index_offset));
    HURRAY_RETURN_IF_ERROR(check_names());

    // KV section, before the descriptors: with a descriptor table, they come from it.
    // Its values are decoded (copied) here; the table stays a view of it, only ever
    // compared and decoded, both of which report a file cut under a mapping as the
    // change.
    if (has_kv) {
        HURRAY_ASSIGN_OR_RETURN(SharedBuffer kv_bytes,
                                read_section(trailer.kv_offset, trailer.kv_length, "KV section"));
        // The table is set aside (no user key), as a view of kv_bytes: not copied.
        std::span<const uint8_t> table_value;
        auto decoded = detail::decode_kv_section_except(kv_bytes.span(), trailer.kv_offset, options.kv,
                                                        kDescriptorTableKey, &table_value);
        if (!decoded) {
            return decoded.error().with_context(
                {.prefix = "KV section " + range(trailer.kv_offset, trailer.kv_offset + trailer.kv_length),
                 .field = "KV section"});
        }
        kv = std::move(decoded).value();
        take_table(kv_bytes, table_value);
    }

    HURRAY_RETURN_IF_ERROR(prefetch_descriptors(tensor_region_end));
    HURRAY_RETURN_IF_ERROR(check_entries(tensor_region_end));

    // Write order: positions by descriptor_offset. Usually the index is in
    // file order already (the writer appends entries as it writes tensors):
    // then both arrays are the identity; otherwise a radix sort.
    const size_t n = entries.size();
    bool in_file_order = true;
    for (size_t i = 1; i < n; ++i) {
        if (entries[i].descriptor_offset <= entries[i - 1].descriptor_offset) {
            in_file_order = false;
            break;
        }
    }
    if (!in_file_order) {
        write_order.resize(n);
        write_position.resize(n);
        std::vector<std::pair<uint64_t, size_t>> order(n);
        for (size_t i = 0; i < n; ++i) {
            order[i] = {entries[i].descriptor_offset, i};
        }
        radix_sort(order);
        // Descriptor regions are non-empty and do not overlap (checked
        // next), so the offsets are distinct and this order is the only one.
        for (size_t k = 0; k < n; ++k) {
            write_order[k] = order[k].second;
            write_position[order[k].second] = k;
        }
    }
    // Overlaps: one pass over the regions in file order when the file is laid
    // out the usual way; otherwise (or to report an overlap) the general
    // check, which sorts every region.
    if (!overlaps_in_file_order()) {
        HURRAY_RETURN_IF_ERROR(check_overlaps());
    }
    return finish_load();
}

Status FileReader::Impl::finish_load() {
    store.reset(entries.size());
    if (!source.contiguous()) {
        data_cache.resize(entries.size());
    }
    if (preads_descriptors()) {
        HURRAY_RETURN_IF_ERROR(read_descriptors());
    }

    source.drop_transient();
    return Status::success();
}

Status FileReader::Impl::prefetch_sections() {
    const uint64_t size = source.size();
    if (source.kind() != detail::FileSource::Kind::kRange || size < kFileHeaderSize + kFileTrailerSize ||
        !source.prefetched(size - kFileTrailerSize, kFileTrailerSize)) {
        return Status::success();
    }
    auto bytes = source.read(size - kFileTrailerSize, kFileTrailerSize, "trailer");
    if (!bytes) {
        return Status::success();  // reported by load
    }
    auto t = decode_file_trailer(bytes->span(), size - kFileTrailerSize);
    if (!t) {
        return Status::success();  // reported by load
    }
    std::vector<std::pair<uint64_t, uint64_t>> ranges{{0, kFileHeaderSize}};
    const auto add = [&](uint64_t offset, uint64_t length) {
        const auto end = add_u64(offset, length);
        if (length > 0 && end && *end <= size - kFileTrailerSize) {
            ranges.emplace_back(offset, length);
        }
    };
    const bool kv = t->kv_offset != 0 || t->kv_length != 0;
    const auto kv_end = add_u64(t->kv_offset, t->kv_length);
    const auto index_end = add_u64(t->index_offset, t->index_length);
    if (kv && kv_end && index_end) {
        // One range when they lie side by side (the writer puts them so).
        const uint64_t lo = std::min(t->kv_offset, t->index_offset);
        const uint64_t hi = std::max(*kv_end, *index_end);
        if (hi - lo <= t->index_length + t->kv_length + kRangeMaxGap) {
            add(lo, hi - lo);
        } else {
            add(t->index_offset, t->index_length);
            add(t->kv_offset, t->kv_length);
        }
    } else {
        add(t->index_offset, t->index_length);
        if (kv) {
            add(t->kv_offset, t->kv_length);
        }
    }
    return source.prefetch_many(std::move(ranges), "file header, index and KV section");
}

Status FileReader::Impl::prefetch_descriptors(uint64_t tensor_region_end) {
    if (source.kind() != detail::FileSource::Kind::kRange || options.descriptors == DescriptorCheck::kLazy ||
        has_table()) {
        return Status::success();  // with a table, the descriptors came with the tail
    }
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    ranges.reserve(entries.size());
    uint64_t budget = kRangeDescriptorBudget;
    for (const IndexEntry& e : entries) {
        const auto end = add_u64(e.descriptor_offset, e.descriptor_length);
        if (e.descriptor_offset < header.first_descriptor_offset || e.descriptor_length < kDescriptorPeekSize ||
            !end || *end > tensor_region_end) {
            continue;  // check_entries reports it
        }
        const uint64_t length = e.descriptor_length <= kRangeDescriptorMax ? e.descriptor_length
                                                                           : kDescriptorPeekSize;
        if (length > budget) {
            break;
        }
        budget -= length;
        ranges.emplace_back(e.descriptor_offset, length);
    }
    return source.prefetch_many(std::move(ranges), "descriptors");
}

Status FileReader::Impl::prefetch_in_place() {
    if (source.kind() != detail::FileSource::Kind::kRange || !has_table()) {
        return Status::success();
    }
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    uint64_t budget = kRangeDescriptorBudget;
    for (size_t i = 0; i < entries.size(); ++i) {
        const IndexEntry& e = entries[i];
        if (in_place[i].load(std::memory_order_acquire) != 0 || e.descriptor_length == 0 ||
            source.prefetched(e.descriptor_offset, e.descriptor_length)) {
            continue;
        }
        if (e.descriptor_length > budget) {
            break;
        }
        budget -= e.descriptor_length;
        ranges.emplace_back(e.descriptor_offset, e.descriptor_length);  // inside the file (check_entries)
    }
    return source.prefetch_many(std::move(ranges), "descriptors");
}

Status FileReader::Impl::fetch_tensor(size_t i) {
    const IndexEntry& e = entries[i];
    // Without a table: unless the descriptor is decoded already. With one: unless the
    // descriptor in place was compared already (the request that brings the data
    // brings it too).
    const bool wanted = has_table() ? in_place[i].load(std::memory_order_acquire) == 0
                                    : store.state[i].load(std::memory_order_acquire) == DescriptorStore::kPending;
    if (source.kind() != detail::FileSource::Kind::kRange || !wanted || e.data_length == 0 ||
        source.prefetched(e.descriptor_offset, e.descriptor_length)) {
        return Status::success();
    }
    {
        const std::lock_guard<std::mutex> lock(data_mutex);
        if (!data_cache[i].empty()) {
            return Status::success();
        }
    }
    // check_entries proved both regions lie inside the file.
    const uint64_t d_end = e.descriptor_offset + e.descriptor_length;
    if (e.data_offset < d_end || e.data_offset - d_end > kRangeMaxPadding) {
        return Status::success();
    }
    const uint64_t length = e.data_offset + e.data_length - e.descriptor_offset;
    HURRAY_ASSIGN_OR_RETURN(SharedBuffer both, source.read(e.descriptor_offset, length, "descriptor and data"));
    // Both slices lie inside `both` (data_offset >= d_end > descriptor_offset).
    HURRAY_RETURN_IF_ERROR(check_in_place(i, both.span().first(e.descriptor_length)));
    SharedBuffer data = both.slice(static_cast<size_t>(e.data_offset - e.descriptor_offset),
                                   static_cast<size_t>(e.data_length));
    {
        const std::lock_guard<std::mutex> lock(data_mutex);
        if (data_cache[i].empty()) {
            data_cache[i] = std::move(data);
        }
    }
    if (!shares_decodes()) {  // otherwise its class's descriptor serves it
        static_cast<void>(ensure_decoded(i, both.slice(0, e.descriptor_length)));
    }
    return Status::success();
}

uint64_t FileReader::Impl::entry_offset(size_t i) const noexcept {
    // The name follows the entry's u16 name_length; both lie in index_bytes.
    const auto name_at = static_cast<uint64_t>(entries[i].name.data() - char_view(index_bytes.span()).data());
    return trailer.index_offset + name_at - 2;
}

std::vector<uint64_t> FileReader::Impl::entry_offsets() const {
    std::vector<uint64_t> offsets(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
        offsets[i] = entry_offset(i);
    }
    return offsets;
}

bool FileReader::Impl::load_in_one_pass(uint64_t tensor_region_end, bool with_crc) {
    const std::span<const uint8_t> index = index_bytes.span();
    if (index.size() < 8) {
        return false;
    }
    const auto count = load_le<uint64_t>(index.data());
    if (count > (index.size() - 8) / detail::kMinIndexEntrySize || count >= UINT32_MAX) {
        return false;
    }
    const auto n = static_cast<size_t>(count);

    // A large index whose names may be out of order: the name table (and the CRC) on a
    // second thread (parallel_open), from the index's bytes, while this one reads the
    // KV section and the index.
    NamesBeside beside;
    beside.index = index;
    beside.count = n;
    beside.table = &by_name;
    beside.with_crc = with_crc;
    detail::HelperThread helper;
    const bool names_beside = options.parallel_open && !sorted && n >= options.parallel_open_min &&
                              index.size() <= UINT32_MAX && detail::HelperThread::useful() &&
                              helper.start(&NamesBeside::run, &beside);
    // Otherwise the CRC here, first (a mismatch: load reports it).
    if (with_crc && !names_beside && crc32c(index) != trailer.index_crc32c) {
        return false;
    }

    // The KV section first: the table is in it.
    SharedBuffer kv_bytes;
    std::span<const uint8_t> table_value;
    KvMetadata decoded_kv;
    if (has_kv) {
        auto read = read_section(trailer.kv_offset, trailer.kv_length, "KV section");
        if (!read) {
            return false;
        }
        kv_bytes = std::move(*read);
        auto decoded = detail::decode_kv_section_except(kv_bytes.span(), trailer.kv_offset, options.kv,
                                                        kDescriptorTableKey, &table_value);
        if (!decoded) {
            return false;
        }
        decoded_kv = std::move(decoded).value();
    }
    // The table's header (locate_descriptor_table's rules; each copy is peeked at below).
    bool table_ok = n > 0 && is_descriptor_table_header(table_value, count);
    uint64_t table_pos = kDescriptorTableHeaderSize;
    // Version 2: each entry's class (a u32 in index order, read in the pass below), each
    // class's copy once after them; the classes are read, not computed.
    const bool v2 = table_ok && load_le<uint16_t>(table_value.data() + 4) == kDescriptorTableVersion2;
    const uint8_t* class_ids = nullptr;
    uint64_t class_count = 0;
    uint32_t classes_seen = 0;
    if (v2) {
        if (table_value.size() < kDescriptorTableV2HeaderSize ||
            n > (table_value.size() - kDescriptorTableV2HeaderSize) / 4) {
            table_ok = false;
        } else {
            class_count = load_le<uint64_t>(table_value.data() + kDescriptorTableHeaderSize);
            table_ok = class_count <= n;
            // SAFETY: 24 + 4n <= table_value.size() (above): the classes lie inside it.
            class_ids = table_value.data() + kDescriptorTableV2HeaderSize;
            table_pos = kDescriptorTableV2HeaderSize + 4 * uint64_t{n};
        }
    }

    std::vector<IndexEntry> list;
    list.reserve(n);
    detail::advise_huge_pages(list.data(), list.capacity() * sizeof(IndexEntry));  // not written yet
    std::vector<uint64_t, DefaultInitAllocator<uint64_t>> at;  // each entry's copy (not zeroed)
    std::optional<ClassBuilder> filed;                // version 1: classes computed
    std::unique_ptr<DescriptorClasses> read_classes;  // version 2: classes read
    std::vector<std::pair<uint64_t, uint32_t>> class_copy;  // version 2: each class's copy, its length
    if (table_ok) {
        at.resize(n);
        if (v2) {
            read_classes = std::make_unique<DescriptorClasses>();
            read_classes->of.resize(n);
        } else {
            filed.emplace(n);
        }
    }
    const uint64_t first = header.first_descriptor_offset;
    const uint64_t align_mask = uint64_t{header.data_buffer_alignment} - 1;  // a power of two
    // The overlap sweep of overlaps_in_file_order, from the header [0, 64).
    uint64_t last_start = 0;
    uint64_t furthest_end = kFileHeaderSize;
    bool in_order = true;  // names strictly ascending so far
    size_t pos = 8;
    for (size_t i = 0; i < n; ++i) {
        IndexEntry e;
        const size_t used = detail::parse_common_entry(index, pos, e);
        if (used == 0) {
            return false;
        }
        pos += used;
        // check_entries, as one condition (their sums cannot overflow: checked first).
        const uint64_t d_off = e.descriptor_offset;
        const uint64_t d_len = e.descriptor_length;
        if (d_off < first || (d_off & (kDescriptorAlignment - 1)) != 0 || d_len < kDescriptorPeekSize ||
            d_len > tensor_region_end || d_off > tensor_region_end - d_len || e.data_length > trailer_offset ||
            e.data_offset > trailer_offset - e.data_length ||
            (e.data_length > 0 && (e.data_offset < first || (e.data_offset & align_mask) != 0))) {
            return false;
        }
        // Regions in file order, none overlapping: the descriptor, then its data.
        if (d_off <= last_start || d_off < furthest_end) {
            return false;
        }
        last_start = d_off;
        furthest_end = std::max(furthest_end, d_off + d_len);
        if (e.data_length > 0) {
            if (e.data_offset <= last_start || e.data_offset < furthest_end) {
                return false;
            }
            last_start = e.data_offset;
            furthest_end = std::max(furthest_end, e.data_offset + e.data_length);
        }
        // Names: ascending (SORTED_INDEX requires it), else into the name table below.
        if (i > 0 && in_order && !(list.back().name < e.name)) {  // string_view: unsigned bytes
            if (sorted) {
                return false;
            }
            in_order = false;
        }
        // The copy: its own magic, version and length (take_table's rules), its class.
        if (table_ok && v2) {
            DescriptorClasses& cls = *read_classes;
            // SAFETY: i < n, and the n classes lie inside table_value (checked above).
            const auto c = load_le<uint32_t>(class_ids + 4 * i);
            if (c == classes_seen) {
                // The class's first entry: its copy comes next.
                if (c == class_count || d_len < kFixedHeaderSize || d_len > table_value.size() - table_pos ||
                    // SAFETY: [table_pos, table_pos + d_len) lies inside table_value (above).
                    !copy_opens_right(table_value.data() + table_pos, e.descriptor_length)) {
                    table_ok = false;
                } else {
                    at[i] = table_pos;
                    class_copy.emplace_back(table_pos, e.descriptor_length);
                    cls.first.push_back(static_cast<uint32_t>(i));
                    cls.size.push_back(1);
                    cls.of[i] = c;
                    table_pos += d_len;
                    ++classes_seen;
                }
            } else if (c > classes_seen || class_copy[c].second != e.descriptor_length) {
                table_ok = false;  // a class out of order, or two lengths in one class
            } else {
                at[i] = class_copy[c].first;
                cls.of[i] = c;
                ++cls.size[c];
            }
        } else if (table_ok) {
            if (d_len < kFixedHeaderSize || d_len > table_value.size() - table_pos) {
                table_ok = false;
            } else {
                // SAFETY: [table_pos, table_pos + d_len) lies inside table_value (above).
                if (!copy_opens_right(table_value.data() + table_pos, e.descriptor_length)) {
                    table_ok = false;
                } else {
                    at[i] = table_pos;
                    filed->add(i, table_value.subspan(static_cast<size_t>(table_pos), static_cast<size_t>(d_len)));
                    table_pos += d_len;
                }
            }
        }
        list.push_back(e);
    }
    if (pos != index.size()) {
        return false;  // bytes left over
    }
    table_ok = table_ok && table_pos == table_value.size() && (!v2 || classes_seen == class_count);
    // The sweep's last regions: the KV section, the index, the trailer.
    const auto visit = [&](uint64_t start, uint64_t end) {
        const bool fine = start > last_start && start >= furthest_end;
        last_start = start;
        furthest_end = std::max(furthest_end, end);
        return fine;
    };
    if ((has_kv && !visit(trailer.kv_offset, trailer.kv_offset + trailer.kv_length)) ||
        (trailer.index_length > 0 && !visit(trailer.index_offset, trailer.index_offset + trailer.index_length)) ||
        !visit(trailer_offset, trailer_offset + kFileTrailerSize)) {
        return false;
    }
    if (names_beside) {
        helper.join();
        if (with_crc && beside.crc != trailer.index_crc32c) {
            return false;  // a mismatch (load reports it), or the names were not all read
        }
        if (in_order) {
            by_name = NameTable{};  // ascending after all: found by binary search
        } else if (beside.built != NameTable::Built::kUnique) {
            return false;
        }
    } else if (!in_order) {
        if (list.size() > NameTable::kMaxEntries ||
            by_name.build(list) != NameTable::Built::kUnique) {
            return false;
        }
    }
    // Every check passed: keep what was built.
    entries = std::move(list);
    ascending = in_order;
    kv = std::move(decoded_kv);
    if (table_ok) {
        // `table_value` lies inside kv_bytes (decode_kv_section_except): a slice of it.
        table = kv_bytes.slice(static_cast<size_t>(table_value.data() - kv_bytes.data()), table_value.size());
        table_at = std::move(at);
        table_in_file = true;
        in_place = std::make_unique<std::atomic<uint8_t>[]>(entries.size());  // NOLINT(modernize-avoid-c-arrays)
        if (shares_decodes()) {
            if (v2) {
                read_classes->ready_to_decode();
                class_storage = std::move(read_classes);
            } else {
                class_storage = filed->take();
            }
            classes.store(class_storage.get(), std::memory_order_release);
        }
    }
    return true;
}

Status FileReader::Impl::check_names() {
    if (sorted) {
        // One linear pass; the entries' offsets are worked out only for an error.
        if (check_index_names(entries, true).ok()) {
            ascending = true;
            return Status::success();
        }
        return check_index_names(entries, true, entry_offsets());
    }
    // Many writers emit names in order (a SafeTensors header sorted by name, for one):
    // strictly ascending names are unique, proved in one linear pass that stops at the
    // first pair out of order (at once, for most other files).
    ascending = true;
    for (size_t i = 1; i < entries.size(); ++i) {
        if (!(entries[i - 1].name < entries[i].name)) {  // string_view: unsigned bytes, as SORTED_INDEX
            ascending = false;
            break;
        }
    }
    if (ascending) {
        return Status::success();
    }
    if (entries.size() > NameTable::kMaxEntries) {
        // Unreachable in practice: each entry takes >= 35 bytes of the index.
        return Error(ErrorCode::kInvalidFile,
                     "index_entry_count: " + dec(entries.size()) + " entries is too many",
                     trailer.index_offset);
    }
    switch (by_name.build(entries)) {
        case NameTable::Built::kUnique:
            return Status::success();  // the table found no duplicate: the names are unique
        case NameTable::Built::kNoMemory:
            return Error(ErrorCode::kOutOfMemory,
                         "index: no memory for the name table of " + dec(entries.size()) + " entries",
                         trailer.index_offset);
        case NameTable::Built::kDuplicate:
        case NameTable::Built::kUnreadable:  // not from entries: every name is read
            break;
    }
    // A duplicate: the full check names the pair the way it always has.
    HURRAY_RETURN_IF_ERROR(check_index_names(entries, false, entry_offsets()));
    return Error(ErrorCode::kDuplicateName, "index: duplicate name", trailer.index_offset);
}

Status FileReader::Impl::check_prefix(size_t i, std::span<const uint8_t> bytes) const {
    const IndexEntry& e = entries[i];
    const uint64_t d_off = e.descriptor_offset;
    std::span<const uint8_t> prefix =
        bytes.size() >= kDescriptorPeekSize ? bytes.first(kDescriptorPeekSize)
                                            : source.view(d_off, kDescriptorPeekSize);
    SharedBuffer read;
    if (prefix.empty()) {  // not contiguous: pread the 10 bytes
        HURRAY_ASSIGN_OR_RETURN(read, source.read(d_off, kDescriptorPeekSize, "descriptor"));
        prefix = read.span();
    }
    auto own_length = peek_length(prefix);
    if (!own_length) {
        return own_length.error().with_context({.prefix = entry_label(e, i) + " descriptor at " + dec(d_off), .tensor = e.name, .base = d_off});
    }
    if (*own_length != e.descriptor_length) {
        return Error(ErrorCode::kInvalidFile,
                     entry_label(e, i) + ": descriptor_length " + dec(e.descriptor_length) +
                         " in the index disagrees with the descriptor's own descriptor_length " +
                         dec(*own_length),
                     d_off + kDescriptorLengthOffset);
    }
    return Status::success();
}

bool FileReader::Impl::overlaps_in_file_order() const {
    // Regions visited in this order are exactly check_overlaps' sorted order
    // when their starts strictly increase; then its sweep is this one. Any
    // other case (including an overlap, so that the error names the same
    // pair) is left to check_overlaps.
    uint64_t last_start = 0;
    uint64_t furthest_end = kFileHeaderSize;  // the header [0, 64)
    bool fine = true;
    auto visit = [&](uint64_t start, uint64_t end) {
        if (start <= last_start || start < furthest_end) {
            fine = false;
        }
        last_start = start;
        furthest_end = std::max(furthest_end, end);
    };
    for (size_t k = 0; k < entries.size(); ++k) {
        const IndexEntry& e = entries[ordered(k)];
        // Both sums were checked by check_entries.
        visit(e.descriptor_offset, e.descriptor_offset + e.descriptor_length);
        if (e.data_length > 0) {
            visit(e.data_offset, e.data_offset + e.data_length);
        }
        if (!fine) {
            return false;
        }
    }
    if (has_kv) {
        visit(trailer.kv_offset, trailer.kv_offset + trailer.kv_length);
    }
    if (trailer.index_length > 0) {
        visit(trailer.index_offset, trailer.index_offset + trailer.index_length);
    }
    visit(trailer_offset, trailer_offset + kFileTrailerSize);
    return fine;
}

Status FileReader::Impl::check_sections() {
    const uint64_t first = header.first_descriptor_offset;

    // Index: 8-aligned, after the header padding, ending before the trailer.
    const uint64_t io = trailer.index_offset;
    if (io % kDescriptorAlignment != 0) {
        return Error(ErrorCode::kInvalidFile,
                     "index_offset: " + dec(io) + " is not a multiple of 8",
                     trailer_offset + trailer_field::kIndexOffset);
    }
    if (io < first) {
        return Error(
            ErrorCode::kInvalidFile,
            "index_offset: " + dec(io) + " lies before first_descriptor_offset " + dec(first),
            trailer_offset + trailer_field::kIndexOffset);
    }
    const auto index_end = add_u64(io, trailer.index_length);
    if (!index_end) {
        return Error(ErrorCode::kInvalidFile,
                     "index_length: index_offset " + dec(io) + " + index_length " +
                         dec(trailer.index_length) + " overflows 64 bits",
                     trailer_offset + trailer_field::kIndexLength);
    }
    if (*index_end > trailer_offset) {
        return Error(ErrorCode::kInvalidFile,
                     "index_length: the index " + range(io, *index_end) +
                         " extends into the trailer at " + dec(trailer_offset),
                     trailer_offset + trailer_field::kIndexLength);
    }

    // KV: present when the flag says so or the trailer locates a section
    // (the reference never sets the flag, SPEC-NOTES 11).
    const bool flag = (header.flags & file_flags::kHasKvMetadata) != 0;
    const uint64_t ko = trailer.kv_offset;
    const uint64_t kl = trailer.kv_length;
    if ((ko != 0) != (kl != 0) && options.strict) {
        return Error(
            ErrorCode::kInvalidFile,
            "kv_offset " + dec(ko) + " and kv_length " + dec(kl) +
                ": both must be 0 (no KV section) or both non-zero",
            trailer_offset + (ko != 0 ? trailer_field::kKvLength : trailer_field::kKvOffset));
    }
    has_kv = ko != 0 && kl != 0;
    if (flag && !has_kv && options.strict) {
        return Error(ErrorCode::kInvalidFile,
                     "file_flags: HAS_KV_METADATA (bit 0) is set but the trailer locates no KV "
                     "section (kv_offset " +
                         dec(ko) + ", kv_length " + dec(kl) + ")",
                     header_field::kFlags);
    }
    if (has_kv) {
        if (ko % kDescriptorAlignment != 0) {
            return Error(ErrorCode::kInvalidFile,
                         "kv_offset: " + dec(ko) + " is not a multiple of 8",
                         trailer_offset + trailer_field::kKvOffset);
        }
        if (ko < first) {
            return Error(
                ErrorCode::kInvalidFile,
                "kv_offset: " + dec(ko) + " lies before first_descriptor_offset " + dec(first),
                trailer_offset + trailer_field::kKvOffset);
        }
        const auto kv_end = add_u64(ko, kl);
        if (!kv_end || *kv_end > trailer_offset) {
            return Error(ErrorCode::kInvalidFile,
                         "kv_length: the KV section [" + dec(ko) + ", +" + dec(kl) +
                             ") extends into the trailer at " + dec(trailer_offset),
                         trailer_offset + trailer_field::kKvLength);
        }
        if (ko < *index_end && io < *kv_end) {
            return Error(
                ErrorCode::kOverlap,
                "KV section " + range(ko, *kv_end) + " overlaps index " + range(io, *index_end),
                trailer_offset + trailer_field::kKvOffset);
        }
    }
    return Status::success();
}

Status FileReader::Impl::check_entries(uint64_t tensor_region_end) {
    const uint64_t first = header.first_descriptor_offset;
    const uint64_t align = header.data_buffer_alignment;  // a power of two (check_file_header)
    for (size_t i = 0; i < entries.size(); ++i) {
        const IndexEntry& e = entries[i];
        // Offsets of the entry's fields (index codec layout, SPEC-NOTES 15).
        const auto field = [this, i, &e](uint64_t rel) {  // only for an error
            return entry_offset(i) + 2 + e.name.size() + rel;
        };
        const auto label = [&e, i] { return entry_label(e, i); };  // built only for an error

        const uint64_t d_off = e.descriptor_offset;
        if (d_off < first) {
            return Error(ErrorCode::kInvalidFile,
                         label() + ": descriptor_offset " + dec(d_off) +
                             " lies before first_descriptor_offset " + dec(first),
                         field(0));
        }
        if (d_off % kDescriptorAlignment != 0) {
            return Error(ErrorCode::kInvalidFile,
                         label() + ": descriptor_offset " + dec(d_off) + " is not a multiple of 8",
                         field(0));
        }
        if (e.descriptor_length < kDescriptorPeekSize) {
            return Error(ErrorCode::kInvalidFile,
                         label() + ": descriptor_length " + dec(e.descriptor_length) +
                             " is shorter than the smallest descriptor (10 bytes)",
                         field(8));
        }
        const auto d_end = add_u64(d_off, e.descriptor_length);
        if (!d_end || *d_end > tensor_region_end) {
            return Error(ErrorCode::kInvalidFile,
                         label() + ": descriptor_offset " + dec(d_off) + " + descriptor_length " +
                             dec(e.descriptor_length) +
                             " extends past the end of the tensor region at " +
                             dec(tensor_region_end),
                         field(8));
        }

        const auto d_end_data = add_u64(e.data_offset, e.data_length);
        if (!d_end_data) {
            return Error(ErrorCode::kInvalidFile,
                         label() + ": data_offset " + dec(e.data_offset) + " + data_length " +
                             dec(e.data_length) + " overflows 64 bits",
                         field(20));
        }
        if (*d_end_data > trailer_offset) {
            return Error(ErrorCode::kInvalidFile,
                         label() + ": data " + range(e.data_offset, *d_end_data) +
                             " (data_offset + data_length) extends into the trailer at " +
                             dec(trailer_offset),
                         field(20));
        }
        if (e.data_length > 0 && e.data_offset < first) {
            return Error(ErrorCode::kInvalidFile,
                         label() + ": data_offset " + dec(e.data_offset) +
                             " lies before first_descriptor_offset " + dec(first) +
                             " (outside the tensor region)",
                         field(12));
        }
        if (e.data_length > 0 && (e.data_offset & (align - 1)) != 0) {
            return Error(ErrorCode::kInvalidFile,
                         label() + ": data_offset " + dec(e.data_offset) +
                             " is not a multiple of data_buffer_alignment " + dec(align),
                         field(12));
        }

        // The descriptor's own magic and length (the rest is decoded lazily); with
        // a table, take_table checked the copy's, and the descriptor in place is
        // compared with it before any data of the tensor is handed out.
        if (options.descriptors != DescriptorCheck::kLazy && !has_table() && !preads_descriptors()) {
            HURRAY_RETURN_IF_ERROR(check_prefix(i));
        }
    }
    return Status::success();
}

Status FileReader::Impl::check_overlaps() const {
    std::vector<Region> regions;
    regions.reserve(2 * entries.size() + 4);
    regions.push_back({0, kFileHeaderSize, Region::Kind::kHeader, 0});
    for (size_t i = 0; i < entries.size(); ++i) {
        const IndexEntry& e = entries[i];
        // Both sums were checked by check_entries.
        regions.push_back({e.descriptor_offset, e.descriptor_offset + e.descriptor_length,
                           Region::Kind::kDescriptor, i});
        if (e.data_length > 0) {
            regions.push_back(
                {e.data_offset, e.data_offset + e.data_length, Region::Kind::kData, i});
        }
    }
    if (has_kv) {
        regions.push_back(
            {trailer.kv_offset, trailer.kv_offset + trailer.kv_length, Region::Kind::kKv, 0});
    }
    if (trailer.index_length > 0) {
        regions.push_back({trailer.index_offset, trailer.index_offset + trailer.index_length,
                           Region::Kind::kIndex, 0});
    }
    regions.push_back(
        {trailer_offset, trailer_offset + kFileTrailerSize, Region::Kind::kTrailer, 0});

    std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) {
        return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
    // Sorted by start: a region overlaps an earlier one exactly when it starts
    // before the furthest end seen so far.
    size_t furthest = 0;
    for (size_t k = 1; k < regions.size(); ++k) {
        if (regions[k].start < regions[furthest].end) {
            return Error(ErrorCode::kOverlap,
                         region_label(regions[furthest], entries) + " overlaps " +
                             region_label(regions[k], entries),
                         regions[k].start);
        }
        if (regions[k].end > regions[furthest].end) {
            furthest = k;
        }
    }
    return Status::success();
}

Status FileReader::Impl::decode_all() {
    // In file order: one sequential sweep over the descriptor pages.
    for (size_t k = 0; k < entries.size(); ++k) {
        const size_t i = ordered(k);
        if (shares_decodes() && shared_descriptor(i) != nullptr) {
            continue;  // its class decoded, and its entry agrees
        }
        DescriptorSlot& slot = store.make(i);
        decode_descriptor(i, slot);
        const bool ok = slot.descriptor.has_value();
        store.state[i].store(ok ? DescriptorStore::kDecoded : DescriptorStore::kFailed,
                             std::memory_order_release);
        if (!ok) {
            return *slot.error;
        }
    }
    return Status::success();
}

uint8_t FileReader::Impl::ensure_decoded(size_t i, const SharedBuffer& given) {
    uint8_t st = store.state[i].load(std::memory_order_acquire);
    if (st != DescriptorStore::kPending) {
        return st;
    }
    // Two threads may decode the same descriptor at once; the first result installed
    // is the one every caller sees.
    DescriptorSlot decoded;
    decode_descriptor(i, decoded, given);
    return store.install(i, std::move(decoded));
}

DescriptorClasses* FileReader::Impl::descriptor_classes() {
    if (DescriptorClasses* ready = classes.load(std::memory_order_acquire)) {
        return ready;
    }
    const size_t n = entries.size();
    if (!shares_decodes() || n == 0 || n >= UINT32_MAX) {
        return nullptr;
    }
    // Built without a lock (it allocates; see DescriptorStore::install); should two
    // threads build at once, the first installed is kept.
    ClassBuilder builder(n);
    for (size_t i = 0; i < n; ++i) {
        builder.add(i, table_copy(i));
    }
    auto built = builder.take();
    const std::lock_guard<std::mutex> lock(classes_mutex);
    if (!class_storage) {
        class_storage = std::move(built);
        classes.store(class_storage.get(), std::memory_order_release);
    }
    return class_storage.get();
}

const DescriptorSlot* FileReader::Impl::class_descriptor(DescriptorClasses& cls, uint32_t c) const {
    uint8_t st = cls.decoded.state[c].load(std::memory_order_acquire);
    if (st == DescriptorStore::kPending) {
        DescriptorSlot slot;
        TensorDescriptor d;
        if (hurray::decode_into(table_copy(cls.first[c]), decoding, d).ok()) {
            slot.span = d.buffers.empty() ? 0 : buffers_end(d, 0, header.data_buffer_alignment).value_or(kNoSpan);
            slot.unplaced = d.buffers.empty();
            slot.descriptor = std::move(d);
        }
        st = cls.decoded.install(c, std::move(slot));
        if (st == DescriptorStore::kDecoded) {
            cls.ready[c].store(&cls.decoded.slot(c), std::memory_order_release);
        }
    }
    return st == DescriptorStore::kDecoded ? &cls.decoded.slot(c) : nullptr;
}

const TensorDescriptor* FileReader::Impl::shared_descriptor(size_t i) {
    DescriptorClasses* cls = descriptor_classes();
    if (cls == nullptr) {
        return nullptr;
    }
    const DescriptorSlot* t = class_descriptor(*cls, cls->of[i]);
    return t != nullptr && fits_class(i, *t) ? &*t->descriptor : nullptr;
}

Status FileReader::Impl::decode_into(size_t i, TensorDescriptor& out, const SharedBuffer& given) const {
    if (given.empty() && has_table() && options.descriptors != DescriptorCheck::kLazy) {
        // The common case: the copy in the table (its magic, version and length were
        // checked at open), as the general path below would choose it.
        return decode_view(i, table_copy(i), table_in_file, out);
    }
    const IndexEntry& e = entries[i];
    // With a descriptor table: its copy (the descriptor in place is compared with it
    // before the tensor's data is handed out), unless the bytes in place were given.
    if (!given.empty() && has_table()) {
        if (auto s = check_in_place(i, given.span()); !s) {
            return std::move(s).error();
        }
    }
    const std::span<const uint8_t> copy = given.empty() && has_table() ? table_copy(i) : std::span<const uint8_t>{};
    // Not contiguous (pread, range sources): the whole descriptor in one read,
    // the prefix check below included (check_entries proved it lies inside
    // the tensor region and is at least 10 bytes long).
    SharedBuffer read = given;
    if (read.empty() && copy.empty() && !source.contiguous()) {
        auto bytes = source.read(e.descriptor_offset, e.descriptor_length, "descriptor");
        if (!bytes) {
            return bytes.error().with_context({.prefix = entry_label(e, i), .tensor = e.name});
        }
        read = std::move(*bytes);
    }
    if (options.descriptors == DescriptorCheck::kLazy) {
        // Deferred from open: the descriptor's own magic and length.
        if (auto p = check_prefix(i, copy.empty() ? read.span() : copy); !p) {
            if (auto changed = source.check_unchanged(); !changed) {
                return changed.error().with_context({.prefix = entry_label(e, i) + " descriptor", .tensor = e.name});
            }
            return std::move(p).error();
        }
    }
    // Contiguous sources: a plain view (no share of the owner taken).
    std::span<const uint8_t> view = !copy.empty() ? copy
                                    : read.empty() ? source.view(e.descriptor_offset, e.descriptor_length)
                                                   : read.span();
    if (view.empty()) {
        auto bytes = source.read(e.descriptor_offset, e.descriptor_length, "descriptor");
        if (!bytes) {
            return bytes.error().with_context({.prefix = entry_label(e, i), .tensor = e.name});
        }
        read = std::move(*bytes);
        view = read.span();
    }
    return decode_view(i, view, table_in_file && !copy.empty(), out);
}

Status FileReader::Impl::decode_view(size_t i, std::span<const uint8_t> view, bool from_table,
                                     TensorDescriptor& out) const {
    if (auto d = hurray::decode_into(view, decoding, out); !d) [[unlikely]] {
        // Bytes that were valid at open and are not now: the file changed
        // under the mapping (its pages read as zeros), not a corrupt file.
        const IndexEntry& e = entries[i];
        if (auto changed = source.check_unchanged(); !changed) {
            return changed.error().with_context({.prefix = entry_label(e, i) + " descriptor", .tensor = e.name});
        }
        return d.error().with_context({.prefix = entry_label(e, i) + " descriptor at " + dec(e.descriptor_offset) +
                                                 (from_table ? " (its copy in the descriptor table)" : ""),
                                       .tensor = e.name,
                                       .base = e.descriptor_offset});
    }
    if (auto s = check_against_entry(i, out); !s) [[unlikely]] {
        const IndexEntry& e = entries[i];
        if (auto changed = source.check_unchanged(); !changed) {
            return changed.error().with_context({.prefix = entry_label(e, i) + " descriptor", .tensor = e.name});
        }
        return std::move(s).error();
    }
    return Status::success();
}

void FileReader::Impl::decode_descriptor(size_t i, DescriptorSlot& slot, const SharedBuffer& given) const {
    TensorDescriptor d;
    if (auto s = decode_into(i, d, given); !s) {
        slot.error = std::move(s).error();
        return;
    }
    slot.descriptor = std::move(d);
}

void FileReader::Impl::take_table(const SharedBuffer& kv_bytes, std::span<const uint8_t> value) {
    if (value.empty() || entries.empty()) {
        return;  // absent, or not a bytes value: no table (it is no user key either way)
    }
    auto at = locate_descriptor_table(value, entries);
    if (!at) {
        return;  // malformed or of another version: the descriptors in place
    }
    for (size_t i = 0; i < entries.size(); ++i) {
        // Each copy's own magic, version and length (>= the fixed header), as
        // check_prefix checks in place (peek_length's rules).
        const uint32_t length = entries[i].descriptor_length;
        if (length < kFixedHeaderSize) {
            return;
        }
        // SAFETY: locate_descriptor_table proved that the copy's `length` (>= 20)
        // bytes lie inside `value`.
        if (!copy_opens_right(value.data() + (*at)[i], length)) {
            return;
        }
    }
    // `value` lies inside kv_bytes (decode_kv_section_except): a slice of it.
    table = kv_bytes.slice(static_cast<size_t>(value.data() - kv_bytes.data()), value.size());
    table_at.assign(at->begin(), at->end());
    table_in_file = true;
    in_place = std::make_unique<std::atomic<uint8_t>[]>(entries.size());  // NOLINT(modernize-avoid-c-arrays)
}

Status FileReader::Impl::read_descriptors() {
    const size_t n = entries.size();
    if (n == 0) {
        return Status::success();
    }
    // The descriptor regions lie inside the tensor region and do not overlap
    // (check_entries, check_overlaps), so their total is at most the file's size.
    std::vector<uint64_t, DefaultInitAllocator<uint64_t>> at(n);  // each written below
    uint64_t total = 0;
    for (size_t k = 0; k < n; ++k) {
        const size_t i = ordered(k);
        at[i] = total;
        total += entries[i].descriptor_length;
    }
    std::vector<uint8_t> bytes(static_cast<size_t>(total));
    for (size_t k = 0; k < n; ++k) {  // in file order: the kernel's read-ahead helps
        const size_t i = ordered(k);
        const IndexEntry& e = entries[i];
        const auto out = std::span<uint8_t>(bytes).subspan(static_cast<size_t>(at[i]), e.descriptor_length);
        if (auto s = source.pread_into_copy(e.descriptor_offset, out, "descriptor"); !s) {
            return s.error().with_context({.prefix = entry_label(e, i), .tensor = e.name});
        }
    }
    for (size_t i = 0; i < n; ++i) {  // in index order, as check_entries checks in place
        HURRAY_RETURN_IF_ERROR(
            check_prefix(i, std::span<const uint8_t>(bytes).subspan(static_cast<size_t>(at[i]), kDescriptorPeekSize)));
    }
    table = SharedBuffer::from_vector(std::move(bytes));
    table_at = std::move(at);
    in_place = std::make_unique<std::atomic<uint8_t>[]>(n);  // NOLINT(modernize-avoid-c-arrays)
    for (size_t i = 0; i < n; ++i) {
        in_place[i].store(1, std::memory_order_relaxed);  // read from their place just now
    }
    return Status::success();
}

Status FileReader::Impl::check_in_place(size_t i, std::span<const uint8_t> bytes) const {
    if (!has_table() || in_place[i].load(std::memory_order_acquire) != 0) {
        return Status::success();
    }
    const IndexEntry& e = entries[i];
    SharedBuffer read;
    // Most descriptors are a few hundred bytes: read into the stack, not a new buffer
    // (an allocation and its release per tensor when kFull compares every copy).
    std::array<uint8_t, 1024> small{};
    if (bytes.empty()) {
        // A pread copy of a mapped file, not a fault on the mapping: about 1 us against
        // 3-50 us, and the descriptor's page is not one the data needs.
        if (e.descriptor_length <= small.size()) {
            const std::span<uint8_t> into(small.data(), e.descriptor_length);
            if (auto got = source.pread_into_copy(e.descriptor_offset, into, "descriptor"); !got) {
                // A short read of a mapped file is the file changing under it: said as
                // check_unchanged says it (as read_copy does); other sources keep their error.
                Status changed = source.contiguous() ? source.check_unchanged() : Status::success();
                const Error& error = changed ? got.error() : changed.error();
                return error.with_context({.prefix = entry_label(e, i), .tensor = e.name});
            }
            bytes = into;
        } else {
            auto got = source.read_copy(e.descriptor_offset, e.descriptor_length, "descriptor");
            if (!got) {
                return got.error().with_context({.prefix = entry_label(e, i), .tensor = e.name});
            }
            read = std::move(*got);
            bytes = read.span();
        }
    }
    const std::span<const uint8_t> copy = table_copy(i);
    // SAFETY: memcmp reads copy.size() bytes of both spans, checked equal in size first.
    const bool same = copy.size() == bytes.size() &&
                      (copy.empty() || std::memcmp(copy.data(), bytes.data(), copy.size()) == 0);
    if (!same) {
        const auto diff = std::mismatch(copy.begin(), copy.end(), bytes.begin(), bytes.end());
        if (auto changed = source.check_unchanged(); !changed) {
            return changed.error().with_context({.prefix = entry_label(e, i) + " descriptor", .tensor = e.name});
        }
        const auto k = static_cast<uint64_t>(diff.first - copy.begin());
        return Error(ErrorCode::kInvalidFile,
                     entry_label(e, i) + ": the descriptor table's copy of its descriptor (KV section at " +
                         dec(trailer.kv_offset) + ") differs from the descriptor at " + dec(e.descriptor_offset) +
                         " (first at its byte " + dec(k) + "): the file is inconsistent, and no data is read",
                     e.descriptor_offset + k);
    }
    in_place[i].store(1, std::memory_order_release);
    return Status::success();
}

Status FileReader::Impl::check_against_entry(size_t i, const TensorDescriptor& d) const {
    const IndexEntry& e = entries[i];
    const uint64_t align = header.data_buffer_alignment;  // a power of two (check_file_header)
    if (one_buffer_fits(i, d)) {
        return Status::success();
    }
    if (d.buffers.empty()) {
        // A composite head: no data. Its data_offset is wherever its writer
        // left it (the descriptor end, or the next aligned offset for the
        // reference, SPEC-NOTES 13), already checked to lie inside the file.
        if (e.data_length != 0) {
            return Error(ErrorCode::kSizeMismatch,
                         entry_label(e, i) + ": data_length " + dec(e.data_length) +
                             " must be 0 for a tensor without buffers",
                         e.descriptor_offset);
        }
        return Status::success();
    }
    if ((e.data_offset & (align - 1)) != 0) {
        return Error(ErrorCode::kInvalidFile,
                     entry_label(e, i) + ": data_offset " + dec(e.data_offset) +
                         " is not a multiple of data_buffer_alignment " + dec(align),
                     e.descriptor_offset);
    }
    const auto buffers_to = buffers_end(d, e.data_offset, align);
    if (!buffers_to) {
        return Error(ErrorCode::kSizeMismatch,
                     entry_label(e, i) + ": the buffers of the descriptor (" +
                         dec(d.buffers.size()) + ") do not fit in 64 bits from data_offset " +
                         dec(e.data_offset),
                     e.descriptor_offset);
    }
    const uint64_t expected = *buffers_to - e.data_offset;
    if (expected != e.data_length) {
        return Error(ErrorCode::kSizeMismatch,
                     entry_label(e, i) + ": data_length " + dec(e.data_length) +
                         " in the index, but the " + dec(d.buffers.size()) +
                         " buffer(s) of its descriptor span " + dec(expected) +
                         " bytes from data_offset " + dec(e.data_offset),
                     e.descriptor_offset);
    }
    return Status::success();
}

// ---------------------------------------------------------------------------
// FileReader
// ---------------------------------------------------------------------------

FileReader::FileReader(std::shared_ptr<Impl> impl) noexcept : impl_(std::move(impl)), entries_(impl_->entries) {}
FileReader::FileReader(const FileReader&) noexcept = default;
FileReader& FileReader::operator=(const FileReader&) noexcept = default;
FileReader::FileReader(FileReader&& other) noexcept
    : impl_(std::move(other.impl_)), entries_(std::exchange(other.entries_, {})) {}
FileReader& FileReader::operator=(FileReader&& other) noexcept {
    impl_ = std::move(other.impl_);
    entries_ = std::exchange(other.entries_, {});
    return *this;
}
FileReader::~FileReader() = default;

Result<FileReader> FileReader::open(const std::filesystem::path& path,
                                    const FileReadOptions& options) {
    auto source = detail::FileSource::open(path.native(), options.use_mmap, options.copy_on_write);
    if (!source) {  // the message names the path ("open '<path>': ...")
        return std::move(source).error().with_context({.file = path.native()});
    }
    auto reader = Impl::open(std::move(source).value_unchecked(), options);
    if (!reader) {
        return reader.error().with_context({.prefix = "'" + path.native() + "'", .file = path.native()});
    }
    return reader;
}

Result<FileReader> FileReader::open(std::shared_ptr<RangeSource> source,
                                    const FileReadOptions& options) {
    if (!source) {
        return Error(ErrorCode::kInvalidArgument, "FileReader::open: null RangeSource");
    }
    const std::string name = source->name();
    auto reader = Impl::open(detail::FileSource::range(std::move(source)), options);
    if (!reader && !name.empty()) {
        return reader.error().with_context({.prefix = "'" + name + "'", .file = name});
    }
    return reader;
}

Result<FileReader> FileReader::open_memory(std::span<const uint8_t> bytes,
                                           std::shared_ptr<const void> owner,
                                           const FileReadOptions& options) {
    return Impl::open(detail::FileSource::memory(bytes, std::move(owner)), options);
}

const FileHeader& FileReader::header() const noexcept { return impl_->header; }
const FileTrailer& FileReader::trailer() const noexcept { return impl_->trailer; }
uint64_t FileReader::file_size() const noexcept { return impl_->source.size(); }
bool FileReader::mapped() const noexcept {
    return impl_->source.kind() == detail::FileSource::Kind::kMapped && !impl_->source.mapping_failed();
}
bool FileReader::copy_on_write() const noexcept { return impl_->source.writable(); }
const KvMetadata& FileReader::kv() const noexcept { return impl_->kv; }
std::optional<uint64_t> FileReader::descriptor_table_bytes() const noexcept {
    return impl_->table_in_file ? std::optional<uint64_t>(impl_->table.size()) : std::nullopt;
}
std::span<const size_t> FileReader::write_order() const noexcept {
    if (!impl_->write_order.empty() || impl_->entries.empty()) {
        return impl_->write_order;
    }
    std::call_once(impl_->identity_once, [&] {
        impl_->identity_order.resize(impl_->entries.size());
        std::iota(impl_->identity_order.begin(), impl_->identity_order.end(), size_t{0});
    });
    return impl_->identity_order;
}

std::optional<size_t> FileReader::find(std::string_view name) const {
    const auto& entries = impl_->entries;
    if (impl_->ascending) {
        // std::string_view compares as unsigned bytes: the SORTED_INDEX order.
        const auto it =
            std::lower_bound(entries.begin(), entries.end(), name,
                             [](const IndexEntry& e, std::string_view n) { return e.name < n; });
        if (it != entries.end() && it->name == name) {
            return static_cast<size_t>(it - entries.begin());
        }
        return std::nullopt;
    }
    return impl_->by_name.find(entries, name);
}

Result<const TensorDescriptor*> FileReader::descriptor(size_t i) const {
    // Listing: its class's descriptor (decoded once for every tensor with the same
    // bytes) when decoded already and entry `i` agrees with it: a few loads, with no
    // stack frame for the rest, which descriptor_slow does.
    if (const DescriptorClasses* cls = impl_->classes.load(std::memory_order_acquire);
        cls != nullptr && i < impl_->entries.size()) {
        const DescriptorSlot* t = cls->ready[cls->of[i]].load(std::memory_order_acquire);
        if (t != nullptr && impl_->fits_class(i, *t)) {
            return &*t->descriptor;
        }
    }
    return impl_->descriptor_slow(i);
}

Result<const TensorDescriptor*> FileReader::Impl::descriptor_slow(size_t i) {
    if (i >= entries.size()) {
        return Error(ErrorCode::kInvalidArgument,
                     "descriptor: tensor " + dec(i) + " requested, the file has " + dec(entries.size()));
    }
    if (shares_decodes()) {
        if (const TensorDescriptor* d = shared_descriptor(i)) {
            return d;  // the first of its class asked for, decoded now
        }
    }
    const uint8_t st = ensure_decoded(i);
    const DescriptorSlot& slot = store.slot(i);
    if (st == DescriptorStore::kFailed) {
        return *slot.error;
    }
    return &*slot.descriptor;
}

Status FileReader::decode_descriptor(size_t i, TensorDescriptor& out) const {
    if (i >= impl_->entries.size()) {
        return Error(ErrorCode::kInvalidArgument, "decode_descriptor: tensor " + dec(i) +
                                                      " requested, the file has " +
                                                      dec(impl_->entries.size()));
    }
    const Impl& m = *impl_;
    const uint8_t st = m.store.state[i].load(std::memory_order_acquire);
    if (st == DescriptorStore::kPending && m.shares_decodes()) {
        // The common case, listing a file with a descriptor table: its copy, then the
        // entry. Any failure is decoded again below, where it gets its context. (Not
        // its class's descriptor: copying a TensorDescriptor costs as much as this
        // decode of the bytes, which the cache holds.)
        if (hurray::decode_into(m.table_copy(i), m.decoding, out).ok() &&
            (m.one_buffer_fits(i, out) || m.check_against_entry(i, out).ok())) {
            return Status::success();
        }
    }
    if (st != DescriptorStore::kPending) {  // kept already: published, read without a lock
        const DescriptorSlot& slot = impl_->store.slot(i);
        if (st == DescriptorStore::kFailed) {
            return *slot.error;
        }
        out = *slot.descriptor;
        return Status::success();
    }
    return impl_->decode_into(i, out);
}

Result<const TensorDescriptor*> FileReader::descriptor(std::string_view name) const {
    const auto i = find(name);
    if (!i) {
        return Error(ErrorCode::kNotFound,
                     std::string("tensor '") + std::string(name) + "' not found");
    }
    return descriptor(*i);
}

Result<SharedBuffer> FileReader::descriptor_bytes(size_t i) const {
    if (i >= impl_->entries.size()) {
        return Error(ErrorCode::kInvalidArgument, "descriptor_bytes: tensor " + dec(i) +
                                                      " requested, the file has " +
                                                      dec(impl_->entries.size()));
    }
    const IndexEntry& e = impl_->entries[i];
    return impl_->source.read(e.descriptor_offset, e.descriptor_length, "descriptor");
}

Status FileReader::read_data(size_t i, uint64_t offset, std::span<uint8_t> out) const {
    if (i >= impl_->entries.size()) {
        return Error(ErrorCode::kInvalidArgument, "read_data: tensor " + dec(i) + " requested, the file has " +
                                                      dec(impl_->entries.size()));
    }
    const IndexEntry& e = impl_->entries[i];
    const auto end = add_u64(offset, out.size());
    if (!end || *end > e.data_length) {
        return Error(ErrorCode::kInvalidArgument,
                     "read_data: " + entry_label(e, i) + ": bytes [" + dec(offset) + ", " +
                         (end ? dec(*end) : std::string("2^64+")) + ") of a data region of " +
                         dec(e.data_length) + " bytes");
    }
    HURRAY_RETURN_IF_ERROR(impl_->check_in_place(i));  // with a table: no data under a disagreeing copy
    // data_offset + data_length lies inside the file (check_entries).
    if (auto s = impl_->source.read_into(e.data_offset + offset, out, "tensor data"); !s) {
        return s.error().with_context({.prefix = entry_label(e, i), .tensor = e.name});
    }
    return Status::success();
}

FileTensorResult FileReader::tensor(size_t i) const {
    if (i < impl_->entries.size()) {
        // Range sources: descriptor and data in one request.
        if (auto fetched = impl_->fetch_tensor(i); !fetched) {
            return std::move(fetched).error().with_context({.prefix = entry_label(impl_->entries[i], i), .tensor = impl_->entries[i].name});
        }
    }
    HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, descriptor(i));
    // With a table: the descriptor in place equals the copy, or no buffer is handed out.
    HURRAY_RETURN_IF_ERROR(impl_->check_in_place(i));
    const IndexEntry& e = impl_->entries[i];
    FileTensor t(*this, i, &e, d);
    if (d->buffers.empty()) {
        return t;
    }
    // One read (or slice) of the whole data region, then a slice per buffer.
    HURRAY_ASSIGN_OR_RETURN(SharedBuffer region, impl_->data_region(i));
    const auto end = buffers_end(*d, e.data_offset, impl_->header.data_buffer_alignment);
    if (!end || *end - e.data_offset != e.data_length) {
        // descriptor() checked this; kept as a guard.
        return Error(ErrorCode::kSizeMismatch,
                     entry_label(e, i) + ": buffers do not match data_length");
    }
    (void)for_each_buffer_start(*d, e.data_offset, impl_->header.data_buffer_alignment,
                                [&](size_t k, uint64_t start) {
                                    // start + byte_size <= end == data_offset + data_length
                                    // == region.size() + data_offset.
                                    t.add_buffer(region.slice(static_cast<size_t>(start - e.data_offset),
                                                              static_cast<size_t>(d->buffers[k].byte_size)),
                                                 d->buffers.size());
                                });
    return t;
}

FileTensorResult FileReader::tensor(std::string_view name) const {
    const auto i = find(name);
    if (!i) {
        return Error(ErrorCode::kNotFound,
                     std::string("tensor '") + std::string(name) + "' not found");
    }
    return tensor(*i);
}

Result<FileComposite> FileReader::composite(size_t head) const {
    HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* hd, descriptor(head));
    const auto& entries = impl_->entries;
    const std::string head_label = entry_label(entries[head], head);
    if (hd->layout_tag() != static_cast<uint8_t>(LayoutTag::kComposite)) {
        return Error(ErrorCode::kInvalidArgument, "composite: " + head_label +
                                                      " is not a composite head (layout tag " +
                                                      hex(hd->layout_tag()) + ")");
    }
    const std::string context = "composite headed by " + head_label +
                                " (descriptors numbered from the head, in descriptor_offset order)";
    CompositeAssembler assembler(CompositeOptions{impl_->strict_descriptors()});
    const size_t n = impl_->entries.size();
    const size_t p = impl_->position(head);
    for (size_t k = p; k < n; ++k) {
        HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, descriptor(impl_->ordered(k)));
        if (auto s = assembler.add(*d); !s) {
            return s.error().with_context({.prefix = context});
        }
        if (assembler.idle()) {
            break;
        }
    }
    if (!assembler.idle()) {
        auto s = assembler.finish();
        if (!s) {
            return s.error().with_context({.prefix = "torn " + context});
        }
        return Error(ErrorCode::kInvalidComposite,
                     "torn " + context + ": the file ends before its last member");
    }
    for (const CompletedComposite& c : assembler.completed()) {
        if (c.head == 0) {
            FileComposite out;
            out.head = head;
            out.members.reserve(c.members.size());
            for (const uint64_t m : c.members) {
                out.members.push_back(impl_->ordered(p + static_cast<size_t>(m)));
            }
            return out;
        }
    }
    return Error(ErrorCode::kInvalidComposite, context + ": the composite did not complete");
}

Status FileReader::check_all() const {
    CompositeAssembler assembler(CompositeOptions{impl_->strict_descriptors()});
    const size_t n = impl_->entries.size();
    for (size_t k = 0; k < n; ++k) {
        HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, descriptor(impl_->ordered(k)));
        if (auto s = assembler.add(*d); !s) {
            return s.error().with_context({.prefix = "composites (descriptors numbered in descriptor_offset order)"});
        }
    }
    if (auto s = assembler.finish(); !s) {
        return s.error().with_context({.prefix = "composites (descriptors numbered in descriptor_offset order)"});
    }
    HURRAY_RETURN_IF_ERROR(impl_->prefetch_in_place());
    for (size_t k = 0; k < n; ++k) {  // with a table: every copy against its descriptor
        HURRAY_RETURN_IF_ERROR(impl_->check_in_place(impl_->ordered(k)));
    }
    return Status::success();
}

Status FileReader::check_unchanged() const { return impl_->source.check_unchanged(); }

Status FileReader::advise(AccessPattern pattern) const {
    return impl_->source.advise(0, impl_->source.size(), pattern);
}

Status FileReader::advise(size_t i, AccessPattern pattern) const {
    if (i >= impl_->entries.size()) {
        return Error(
            ErrorCode::kInvalidArgument,
            "advise: tensor " + dec(i) + " requested, the file has " + dec(impl_->entries.size()));
    }
    const IndexEntry& e = impl_->entries[i];
    return impl_->source.advise(e.data_offset, e.data_length, pattern);
}

}  // namespace hurray
