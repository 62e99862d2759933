// The sort family's onesweep variant on CUDA/HIP (abi::kSortOnesweep; semantics
// backends/host/host_sort.cpp), after Adinets & Merrill, "Onesweep: A Faster Least Significant
// Digit Radix Sort for GPUs" (2022), which CUB's DeviceRadixSort (PyTorch's long sort) runs:
//  1. one read of the input counts every 8-bit digit of every key (a histogram per row and
//     digit position), and a scan turns each into the digit's first offset in the row;
//  2. one kernel per digit, least significant first: a block takes the next tile of 4096
//     elements from an atomic counter (so tiles start in order), ranks its keys by the digit
//     (block_radix_rank.cuh), publishes its digit counts and looks back over the tiles before
//     it in the same row for their running totals (decoupled look-back: a tile whose
//     inclusive total is published ends the walk), then writes its keys and positions, grouped
//     by digit through shared memory, to the digit's offset plus the tiles' total before it.
//     Keys of up to 32 bits travel with their positions as one 8-byte word; each pass is a
//     kernel of its own stage (first, middle, last), so it holds only its own registers.
// Every pass is stable, so the last leaves each row in key order with ties in input order. The
// first pass reads the input itself and the last writes the values and int64 indices: a value
// is rebuilt from its key where the key determines its bits (sort_keys.cuh), otherwise copied
// from the input by position (NaN and zero keys), so the values stay bit for bit.
#include <type_traits>

#include "kernels/gpu/block_radix_rank.cuh"
#include "kernels/gpu/sort_keys.cuh"
#include "kernels/gpu/sort_launchers.hpp"

namespace nbx::gpu {
namespace {

using namespace sort;

static_assert(abi::kSortOnesweepBits == kDigitBits && abi::kSortOnesweepBuckets == kDigits);
constexpr int kItems = int(abi::kSortOnesweepTile) / kRankThreads;  // 16
// The histogram's copies of every counter: as many as 32 KiB of shared memory holds for the
// key's digits (4 for 64-bit keys, 8 for 32-bit, 32 for 8-bit).
template <typename Elem>
inline constexpr int kHistParts = 32 / int(sizeof(Elem));
// A tile's look-back word: a flag in the top two bits over a 30-bit count.
constexpr u32 kFlagAggregate = 1u << 30;  // this tile's own count of the digit
constexpr u32 kFlagPrefix = 2u << 30;     // the count of the digit in this tile and all before
constexpr u32 kCountMask = kFlagAggregate - 1;

template <typename Key>
struct OnesweepWorkspace {
  Key* keys[2];
  u32* pos[2];
  // Keys of up to 32 bits travel with their positions as one 8-byte word, key above position
  // (one load and one store an element a pass), over keys[] and pos[]'s words.
  u64* pairs[2];
  u32* offsets;   // [row][pass][digit]: the digit's first place in the row
  u32* counters;  // [pass]: the next tile to take
  u32* status;    // [pass][row · tiles + tile][digit]: look-back words
  i64 tiles;
  int passes;
  i64 cleared_words;  // offsets, counters and status: zeroed before the histogram

  NBX_GPU_HOST_DEVICE static OnesweepWorkspace at(u32* words, const abi::SortParams& p) {
    constexpr i64 kw = sizeof(Key) / 4;
    const i64 n = p.rows * p.row_len;
    OnesweepWorkspace w;
    w.tiles = abi::sort_onesweep_tiles(p.row_len);
    w.passes = int(abi::sort_onesweep_passes(p.key_bits));
    w.keys[0] = reinterpret_cast<Key*>(words);
    w.keys[1] = reinterpret_cast<Key*>(words + n * kw);
    w.pos[0] = words + 2 * n * kw;
    w.pos[1] = w.pos[0] + n;
    w.pairs[0] = reinterpret_cast<u64*>(words);
    w.pairs[1] = reinterpret_cast<u64*>(words + 2 * n);  // 8-byte aligned: 2n words in
    w.offsets = w.pos[1] + n;
    w.counters = w.offsets + p.rows * w.passes * kDigits;
    w.status = w.counters + w.passes;
    w.cleared_words =
        p.rows * w.passes * kDigits + w.passes + w.passes * p.rows * w.tiles * kDigits;
    return w;
  }
};

__global__ void onesweep_clear_kernel(u32* words, i64 count) {
  const i64 step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < count; e += step) words[e] = 0;
}

// Block b counts the digits of tiles [b·per_block, (b+1)·per_block) of all rows' tiles (in
// shared memory, then added to the row's counts whenever the row changes).
template <typename Key, typename Elem>
__global__ void __launch_bounds__(kRankThreads)
    onesweep_histogram_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, const Elem* in,
                              OnesweepWorkspace<Key> w, i64 per_block) {
  // kParts copies of every counter (a lane adds to copy lane % kParts): fewer lanes of a warp
  // meet on one counter when a digit takes few values (a float's top byte).
  constexpr int kPasses = int(sizeof(Elem)), kParts = kHistParts<Elem>;
  __shared__ u32 hist[kPasses][kDigits][kParts];
  for (int k = threadIdx.x; k < kPasses * kDigits * kParts; k += kRankThreads)
    (&hist[0][0][0])[k] = 0;
  __syncthreads();
  const int part = lane_id() % kParts;
  const i64 first = i64(blockIdx.x) * per_block;
  const i64 end = first + per_block < p.rows * w.tiles ? first + per_block : p.rows * w.tiles;
  const auto flush = [&](i64 row) {
    __syncthreads();
    for (int k = threadIdx.x; k < kPasses * kDigits; k += kRankThreads) {
      u32* c = &hist[0][0][0] + k * kParts;
      u32 sum = 0;
      for (int q = 0; q < kParts; ++q) sum += c[q], c[q] = 0;
      if (sum != 0) atomicAdd(&w.offsets[row * w.passes * kDigits + k], sum);
    }
    __syncthreads();
  };
  i64 row = first / w.tiles;
  RowOffsets o = row_offsets(p, row);
  for (i64 t = first; t < end; ++t) {
    const i64 r = t / w.tiles;
    if (r != row) flush(row), row = r, o = row_offsets(p, row);
    const i64 begin = (t - r * w.tiles) * abi::kSortOnesweepTile;
    Elem raw[kItems];  // loaded together (a position past the row reads its last element)
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const i64 j = begin + i * kRankThreads + threadIdx.x;
      raw[i] = in[o.in + (j < p.row_len ? j : p.row_len - 1) * p.in_row_stride];
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (begin + i * kRankThreads + threadIdx.x >= p.row_len) break;
      const u64 key = sort_key(raw_bits(raw[i]), p.dtype, p.key_bits, p.descending);
#pragma unroll
      for (int pass = 0; pass < kPasses; ++pass)
        atomicAdd(&hist[pass][int(key >> (kDigitBits * pass)) & (kDigits - 1)][part], 1u);
    }
  }
  flush(row);
}

// Each (row, pass)'s digit counts into exclusive offsets: a block each.
template <typename Key>
__global__ void __launch_bounds__(kRankThreads) onesweep_scan_kernel(OnesweepWorkspace<Key> w) {
  __shared__ RankShared s;
  u32* c = w.offsets + i64(blockIdx.x) * kDigits;
  const u32 v = c[threadIdx.x];
  u32 total;
  c[threadIdx.x] = block_exclusive_scan(v, s, total);
}

// A pass's shared memory: the ranking's, the digits' bases and the tile's id, then the
// exchange buffer of a tile of 8-byte words.
struct PassShared {
  RankShared rank;
  u32 base[kDigits];  // a digit's place in the row, less its first rank in the tile
  u32 tile_id;
};
constexpr size_t kPassSharedBytes = (sizeof(PassShared) + 15) / 16 * 16;

// Which pass a kernel is: the first reads the input, the last writes values and indices (a
// key of 8 bits is both); the others read and write the workspace. A template argument, so
// each kernel holds only its own pass's registers.
constexpr int kFirstPass = 1, kLastPass = 2;

// Thread d: the tile's count of digit d published, the counts of the row's tiles before it
// summed by decoupled look-back, and the digit's base in the row into sh.base.
template <typename Key>
NBX_GPU_INLINE void look_back(PassShared& sh, const OnesweepWorkspace<Key>& w, i64 rows, i64 id,
                              i64 row, i64 tile, int pass, u32 mine) {
  const int d = int(threadIdx.x);
  volatile u32* status = w.status + i64(pass) * rows * w.tiles * kDigits;
  u32 before = 0;
  if (tile == 0) {
    status[id * kDigits + d] = kFlagPrefix | mine;
  } else {
    status[id * kDigits + d] = kFlagAggregate | mine;
    for (i64 t = id - 1;; --t) {
      u32 word;
      do {
        word = status[t * kDigits + d];
      } while ((word & ~kCountMask) == 0);
      before += word & kCountMask;
      if (word & kFlagPrefix) break;
    }
    status[id * kDigits + d] = kFlagPrefix | (before + mine);
  }
  sh.base[d] = w.offsets[(row * w.passes + pass) * kDigits + d] + before - sh.rank.digit_start[d];
}

// Keys of up to 32 bits: each element one (key << 32 | position) word from load to store.
// Three blocks a multiprocessor (at most 80 registers, a few words spilled): the passes are
// latency-bound, and two resident blocks left the multiprocessor idle at their barriers — the
// long sort of 2^26 keys took 3.35 ms at two blocks, 3.12 at three (H200, 2026-12-03).
template <typename Elem, int Stage>
__global__ void __launch_bounds__(kRankThreads, 3)
    onesweep_pass_paired(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Elem* values,
                         long long* indices, const Elem* in, OnesweepWorkspace<u32> w, int pass) {
  extern __shared__ __align__(16) unsigned char sort_smem[];
  PassShared& sh = *reinterpret_cast<PassShared*>(sort_smem);
  u64* xpairs = reinterpret_cast<u64*>(sort_smem + kPassSharedBytes);
  if (threadIdx.x == 0) sh.tile_id = atomicAdd(&w.counters[pass], 1u);
  __syncthreads();
  const i64 id = sh.tile_id, row = id / w.tiles, tile = id - row * w.tiles;
  const i64 begin = tile * abi::kSortOnesweepTile;
  const int count =
      int(p.row_len - begin < abi::kSortOnesweepTile ? p.row_len - begin : abi::kSortOnesweepTile);
  const int shift = 32 + kDigitBits * pass;  // the digit's place in a pair
  const i64 row_base = row * p.row_len;
  RowOffsets o{};
  if constexpr ((Stage & (kFirstPass | kLastPass)) != 0) o = row_offsets(p, row);

  u64 item[kItems];
  // Loads first, unconditional (past the row's end: its last element), so they are in flight
  // together; keys after.
  const auto clamped = [&](int i) {
    const i64 j = begin + striped_element<kItems>(i);
    return j < p.row_len ? j : p.row_len - 1;
  };
  if constexpr ((Stage & kFirstPass) != 0) {
    Elem raw[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) raw[i] = in[o.in + clamped(i) * p.in_row_stride];
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      item[i] = (sort_key(raw_bits(raw[i]), p.dtype, p.key_bits, p.descending != 0) << 32) |
                u32(begin + striped_element<kItems>(i));
  } else {
    const u64* pairs_in = (pass & 1) ? w.pairs[1] : w.pairs[0];
#pragma unroll
    for (int i = 0; i < kItems; ++i) item[i] = pairs_in[row_base + clamped(i)];
  }
  u32 rank[kItems];
  const u32 mine = rank_digits_by<kItems>(
      sh.rank, [&](int i) { return u32(item[i] >> shift) & (kDigits - 1); },
      [&](int i) { return striped_element<kItems>(i) < count; }, rank);
  look_back(sh, w, p.rows, id, row, tile, pass, mine);
#pragma unroll
  for (int i = 0; i < kItems; ++i)
    if (striped_element<kItems>(i) < count) xpairs[rank[i]] = item[i];
  __syncthreads();

  // Each written to its digit's place: runs of one digit are consecutive in both the tile and
  // the row, so the writes are coalesced.
  u64* pairs_out = (pass & 1) ? w.pairs[0] : w.pairs[1];
#pragma unroll
  for (int m = 0; m < kItems; ++m) {
    const int s = m * kRankThreads + int(threadIdx.x);
    if (s >= count) continue;
    const u64 pair = xpairs[s];
    const u32 to = sh.base[u32(pair >> shift) & (kDigits - 1)] + u32(s);
    if constexpr ((Stage & kLastPass) != 0)
      write_sorted(p, o, values, indices, in, pair >> 32, u32(pair), to);
    else
      pairs_out[row_base + to] = pair;
  }
}

// 64-bit keys: keys and positions apart (the exchange goes through shared memory twice).
template <typename Elem, int Stage>
__global__ void __launch_bounds__(kRankThreads)
    onesweep_pass_wide(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Elem* values,
                       long long* indices, const Elem* in, OnesweepWorkspace<u64> w, int pass) {
  extern __shared__ __align__(16) unsigned char sort_smem[];
  PassShared& sh = *reinterpret_cast<PassShared*>(sort_smem);
  u64* xkeys = reinterpret_cast<u64*>(sort_smem + kPassSharedBytes);
  u32* xpos = reinterpret_cast<u32*>(xkeys);
  if (threadIdx.x == 0) sh.tile_id = atomicAdd(&w.counters[pass], 1u);
  __syncthreads();
  const i64 id = sh.tile_id, row = id / w.tiles, tile = id - row * w.tiles;
  const i64 begin = tile * abi::kSortOnesweepTile;
  const int count =
      int(p.row_len - begin < abi::kSortOnesweepTile ? p.row_len - begin : abi::kSortOnesweepTile);
  const int src = pass & 1, shift = kDigitBits * pass;
  const i64 row_base = row * p.row_len;
  RowOffsets o{};
  if constexpr ((Stage & (kFirstPass | kLastPass)) != 0) o = row_offsets(p, row);

  u64 k[kItems];
  u32 at[kItems];
  const auto clamped = [&](int i) {
    const i64 j = begin + striped_element<kItems>(i);
    return j < p.row_len ? j : p.row_len - 1;
  };
  if constexpr ((Stage & kFirstPass) != 0) {
    Elem raw[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) raw[i] = in[o.in + clamped(i) * p.in_row_stride];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      k[i] = sort_key(raw_bits(raw[i]), p.dtype, p.key_bits, p.descending != 0);
      at[i] = u32(begin + striped_element<kItems>(i));
    }
  } else {
    // Selected, not indexed: an indexed kernel argument would be copied to local memory.
    const u64* keys_in = src ? w.keys[1] : w.keys[0];
    const u32* pos_in = src ? w.pos[1] : w.pos[0];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      k[i] = keys_in[row_base + clamped(i)];
      at[i] = pos_in[row_base + clamped(i)];
    }
  }
  const auto valid = [&](int i) { return striped_element<kItems>(i) < count; };
  u32 rank[kItems];
  const u32 mine = rank_digits_by<kItems>(
      sh.rank, [&](int i) { return u32(k[i] >> shift) & (kDigits - 1); }, valid, rank);
  look_back(sh, w, p.rows, id, row, tile, pass, mine);

  const int d = int(threadIdx.x);
#pragma unroll
  for (int i = 0; i < kItems; ++i)
    if (valid(i)) xkeys[rank[i]] = k[i];
  __syncthreads();
#pragma unroll
  for (int m = 0; m < kItems; ++m) {
    const int s = m * kRankThreads + d;
    k[m] = s < count ? xkeys[s] : 0ull;
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kItems; ++i)
    if (valid(i)) xpos[rank[i]] = at[i];
  __syncthreads();
  u64* keys_out = src ? w.keys[0] : w.keys[1];
  u32* pos_out = src ? w.pos[0] : w.pos[1];
#pragma unroll
  for (int m = 0; m < kItems; ++m) {
    const int s = m * kRankThreads + d;
    if (s >= count) continue;
    const u32 from = xpos[s];
    const u32 to = sh.base[u32(k[m] >> shift) & (kDigits - 1)] + u32(s);
    if constexpr ((Stage & kLastPass) != 0) {
      write_sorted(p, o, values, indices, in, k[m], from, to);
    } else {
      keys_out[row_base + to] = k[m];
      pos_out[row_base + to] = from;
    }
  }
}

// Pass `pass` of `passes` as the kernel of its stage.
template <typename Key, typename Elem>
void launch_pass(const abi::SortParams& p, Elem* values, long long* indices, const Elem* in,
                 const OnesweepWorkspace<Key>& w, int pass, unsigned blocks, size_t smem,
                 Stream s) {
  const int stage = (pass == 0 ? kFirstPass : 0) | (pass == w.passes - 1 ? kLastPass : 0);
  const auto run = [&](auto stage_constant) {
    constexpr int kStage = decltype(stage_constant)::value;
    if constexpr (sizeof(Key) == 4)
      onesweep_pass_paired<Elem, kStage>
          <<<blocks, kRankThreads, smem, s>>>(p, values, indices, in, w, pass);
    else
      onesweep_pass_wide<Elem, kStage>
          <<<blocks, kRankThreads, smem, s>>>(p, values, indices, in, w, pass);
  };
  switch (stage) {
    case kFirstPass:
      return run(std::integral_constant<int, kFirstPass>{});
    case kLastPass:
      return run(std::integral_constant<int, kLastPass>{});
    case kFirstPass | kLastPass:
      return run(std::integral_constant<int, kFirstPass | kLastPass>{});
    default:
      return run(std::integral_constant<int, 0>{});
  }
}

template <typename Key, typename Elem>
void launch_onesweep(const abi::SortParams& p, const GpuLaunch& l) {
  const Stream s = static_cast<Stream>(l.stream);
  const auto [values, indices, in] = sort_buffers<Elem>(l);
  const OnesweepWorkspace<Key> w =
      OnesweepWorkspace<Key>::at(static_cast<u32*>(l.buffers[3].address), p);
  onesweep_clear_kernel<<<grid_stride_blocks(w.cleared_words, 256, l), 256, 0, s>>>(
      w.offsets, w.cleared_words);
  // Histogram: about 8 blocks per multiprocessor, each over consecutive tiles.
  const i64 all_tiles = p.rows * w.tiles;
  const i64 blocks_wanted =
      i64(l.options->multiprocessors > 0 ? l.options->multiprocessors : 1) * 8;
  const i64 per_block = (all_tiles + blocks_wanted - 1) / blocks_wanted;
  onesweep_histogram_kernel<Key, Elem>
      <<<unsigned((all_tiles + per_block - 1) / per_block), kRankThreads, 0, s>>>(p, in, w,
                                                                                  per_block);
  onesweep_scan_kernel<Key><<<unsigned(p.rows * w.passes), kRankThreads, 0, s>>>(w);
  // The exchange buffer: a tile of 8-byte words ((key, position) pairs, or 64-bit keys).
  const size_t smem = kPassSharedBytes + size_t(abi::kSortOnesweepTile) * 8;
  for (int pass = 0; pass < w.passes; ++pass)
    launch_pass<Key, Elem>(p, values, indices, in, w, pass, unsigned(all_tiles), smem, s);
}

}  // namespace

void launch_sort_onesweep(const abi::SortParams& p, const GpuLaunch& l) {
  with_key_types(p.key_bits, [&](auto types) {
    using T = decltype(types);
    launch_onesweep<typename T::Key, typename T::Elem>(p, l);
  });
}

}  // namespace nbx::gpu
