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
// Every pass is stable, so the last leaves each row in key order with ties in input order. The
// first pass reads the input itself and the last writes the values and int64 indices: a value
// is rebuilt from its key where the key determines its bits (sort_keys.cuh), otherwise copied
// from the input by position (NaN and zero keys), so the values stay bit for bit.
#include "kernels/gpu/block_radix_rank.cuh"
#include "kernels/gpu/sort_keys.cuh"
#include "kernels/gpu/sort_launchers.hpp"

namespace nbx::gpu {
namespace {

using namespace sort;

static_assert(abi::kSortOnesweepBits == kDigitBits && abi::kSortOnesweepBuckets == kDigits);
constexpr int kItems = int(abi::kSortOnesweepTile) / kRankThreads;  // 16
constexpr int kMaxPasses = 8;                                       // 64-bit keys
constexpr int kHistParts = 4;
// A tile's look-back word: a flag in the top two bits over a 30-bit count.
constexpr u32 kFlagAggregate = 1u << 30;  // this tile's own count of the digit
constexpr u32 kFlagPrefix = 2u << 30;     // the count of the digit in this tile and all before
constexpr u32 kCountMask = kFlagAggregate - 1;

template <typename Key>
struct OnesweepWorkspace {
  Key* keys[2];
  u32* pos[2];
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
  // kHistParts copies of every counter (a lane adds to copy lane % kHistParts): fewer lanes of
  // a warp meet on one counter when a digit takes few values (a float's top byte).
  __shared__ u32 hist[kMaxPasses][kDigits][kHistParts];
  for (int k = threadIdx.x; k < kMaxPasses * kDigits * kHistParts; k += kRankThreads)
    (&hist[0][0][0])[k] = 0;
  __syncthreads();
  const int part = lane_id() % kHistParts;
  const i64 first = i64(blockIdx.x) * per_block;
  const i64 end = first + per_block < p.rows * w.tiles ? first + per_block : p.rows * w.tiles;
  const auto flush = [&](i64 row) {
    __syncthreads();
    for (int k = threadIdx.x; k < w.passes * kDigits; k += kRankThreads) {
      u32* c = &hist[0][0][0] + k * kHistParts;
      u32 sum = 0;
      for (int q = 0; q < kHistParts; ++q) sum += c[q], c[q] = 0;
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
      for (int pass = 0; pass < w.passes; ++pass)
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

template <typename Key, typename Elem>
__global__ void __launch_bounds__(kRankThreads)
    onesweep_pass_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Elem* values,
                         long long* indices, const Elem* in, OnesweepWorkspace<Key> w, int pass) {
  extern __shared__ __align__(16) unsigned char sort_smem[];
  PassShared& sh = *reinterpret_cast<PassShared*>(sort_smem);
  Key* xkeys = reinterpret_cast<Key*>(sort_smem + kPassSharedBytes);
  u32* xpos = reinterpret_cast<u32*>(xkeys);
  if (threadIdx.x == 0) sh.tile_id = atomicAdd(&w.counters[pass], 1u);
  __syncthreads();
  const i64 id = sh.tile_id, row = id / w.tiles, tile = id - row * w.tiles;
  const i64 begin = tile * abi::kSortOnesweepTile;
  const int count =
      int(p.row_len - begin < abi::kSortOnesweepTile ? p.row_len - begin : abi::kSortOnesweepTile);
  const bool first = pass == 0, last = pass == w.passes - 1, descending = p.descending != 0;
  const int src = pass & 1, shift = kDigitBits * pass;
  const i64 row_base = row * p.row_len;
  // Selected, not indexed: an indexed kernel argument would be copied to local memory.
  const Key* keys_in = src ? w.keys[1] : w.keys[0];
  const u32* pos_in = src ? w.pos[1] : w.pos[0];
  Key* keys_out = src ? w.keys[0] : w.keys[1];
  u32* pos_out = src ? w.pos[0] : w.pos[1];
  const RowOffsets o = first || last ? row_offsets(p, row) : RowOffsets{};

  Key k[kItems];
  u32 at[kItems], digit[kItems], rank[kItems];
  bool valid[kItems];
  // Loads first, unconditional (past the row's end: its last element), so they are in flight
  // together; keys after.
  const auto clamped = [&](int i) {
    const i64 j = begin + striped_element<kItems>(i);
    return j < p.row_len ? j : p.row_len - 1;
  };
  if (first) {
    Elem raw[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) raw[i] = in[o.in + clamped(i) * p.in_row_stride];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      k[i] = Key(sort_key(raw_bits(raw[i]), p.dtype, p.key_bits, descending));
      at[i] = u32(begin + striped_element<kItems>(i));
    }
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      k[i] = keys_in[row_base + clamped(i)];
      at[i] = pos_in[row_base + clamped(i)];
    }
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    valid[i] = striped_element<kItems>(i) < count;
    digit[i] = u32(k[i] >> shift) & (kDigits - 1);
  }
  const u32 mine = rank_digits<kItems>(sh.rank, digit, valid, rank);

  // Thread d: this tile's count of digit d, the count in the row's tiles before it, published.
  const int d = int(threadIdx.x);
  volatile u32* status = w.status + i64(pass) * p.rows * w.tiles * kDigits;
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
  __syncthreads();

  // Keys and positions in rank order (one exchange of (key, position) words for keys of up to
  // 32 bits, one of each otherwise), then each written to its digit's place: runs of one digit
  // are consecutive in both, so the writes are coalesced.
  Key sorted[kItems];
  u32 from[kItems];
  if constexpr (sizeof(Key) == 4) {
    u64* xpairs = reinterpret_cast<u64*>(xkeys);
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (valid[i]) xpairs[rank[i]] = (u64(k[i]) << 32) | at[i];
    __syncthreads();
#pragma unroll
    for (int m = 0; m < kItems; ++m) {
      const int s = m * kRankThreads + d;
      const u64 pair = s < count ? xpairs[s] : 0ull;
      sorted[m] = Key(pair >> 32);
      from[m] = u32(pair);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (valid[i]) xkeys[rank[i]] = k[i];
    __syncthreads();
#pragma unroll
    for (int m = 0; m < kItems; ++m) {
      const int s = m * kRankThreads + d;
      sorted[m] = s < count ? xkeys[s] : Key(0);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItems; ++i)
      if (valid[i]) xpos[rank[i]] = at[i];
    __syncthreads();
#pragma unroll
    for (int m = 0; m < kItems; ++m) {
      const int s = m * kRankThreads + d;
      from[m] = s < count ? xpos[s] : 0u;
    }
  }
#pragma unroll
  for (int m = 0; m < kItems; ++m) {
    const int s = m * kRankThreads + d;
    if (s >= count) continue;
    const u32 to = sh.base[u32(sorted[m] >> shift) & (kDigits - 1)] + u32(s);
    if (!last) {
      keys_out[row_base + to] = sorted[m];
      pos_out[row_base + to] = from[m];
      continue;
    }
    u64 raw;
    const Elem v = element_of_key(u64(sorted[m]), p.dtype, p.key_bits, descending, raw)
                       ? Elem(raw)
                       : in[o.in + i64(from[m]) * p.in_row_stride];
    values[o.values + i64(to) * p.values_row_stride] = v;
    indices[o.indices + i64(to) * p.indices_row_stride] = from[m];
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
    onesweep_pass_kernel<Key, Elem>
        <<<unsigned(all_tiles), kRankThreads, smem, s>>>(p, values, indices, in, w, pass);
}

}  // namespace

void launch_sort_onesweep(const abi::SortParams& p, const GpuLaunch& l) {
  with_key_types(p.key_bits, [&](auto types) {
    using T = decltype(types);
    launch_onesweep<typename T::Key, typename T::Elem>(p, l);
  });
}

}  // namespace nbx::gpu
