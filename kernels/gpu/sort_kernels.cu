// The "sort" kernel family for CUDA and HIP (kernel ABI: abi::SortParams, semantics
// backends/host/host_sort.cpp): rows sorted stably by the order-preserving transform of their
// keys (sort_keys.cuh), ties in input order, values copied bit for bit. This file holds the
// launcher and the rows variant; the radix and onesweep variants have their own sources.
//
// rows (kSortRows): a block radix sort of one tile of at most 4096 elements, as CUB's
// BlockRadixSort (what PyTorch runs for rows of up to 4096). The tile holds tile / segment rows,
// row r's element j at r·segment + j; elements past a row's end are pads with the largest key.
// Keys stay in registers (Items per thread, warp-striped); each pass ranks them by one 8-bit
// digit (block_radix_rank.cuh) and exchanges them through shared memory into rank order,
// least significant digit first, then the row number's digits, so the tile ends grouped by row
// and each row in key order, ties in element order (stable: every pass is). The element's tile
// index travels with its key (below it in one word for keys of up to 32 bits); the last pass
// writes each row's values (copied from the input by position) and positions.
#include <type_traits>

#include "kernels/gpu/block_radix_rank.cuh"
#include "kernels/gpu/sort_keys.cuh"
#include "kernels/gpu/sort_launchers.hpp"

namespace nbx::gpu {
namespace {

using namespace sort;

constexpr size_t round_up(size_t bytes, size_t to) {
  return (bytes + to - 1) / to * to;
}
constexpr size_t kRankSharedBytes = round_up(sizeof(RankShared), 16);

// The bits of an element's tile index (at most 4096 elements a tile).
constexpr int kIndexBits = 12;
static_assert((1 << kIndexBits) >= abi::kSortRowsTileMax);

// Word: what a thread holds per element. Packed (keys of up to 32 bits): Word is the key
// shifted over the element's tile index, so one exchange a pass moves both. Otherwise (64-bit
// keys) Word is the key and the index travels in its own exchange.
// Two blocks a multiprocessor at least where the words fit 128 registers (not 64-bit keys).
template <typename Word, typename Elem, int Items, bool Packed>
__global__ void __launch_bounds__(kRankThreads, Packed ? 2 : 1)
    sort_rows_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Elem* values,
                     long long* indices, const Elem* in) {
  constexpr int kTile = kRankThreads * Items;
  constexpr int kKeyShift = Packed ? kIndexBits : 0;
  extern __shared__ __align__(16) unsigned char sort_smem[];
  RankShared& rs = *reinterpret_cast<RankShared*>(sort_smem);
  Word* xwords = reinterpret_cast<Word*>(sort_smem + kRankSharedBytes);
  u32* xpos = reinterpret_cast<u32*>(xwords);  // the same buffer, one exchange at a time
  int seg_shift = 0;
  while ((i64(1) << seg_shift) < p.segment) ++seg_shift;
  const u32 seg_mask = (1u << seg_shift) - 1;
  const int rows_per_block = int(p.tile >> seg_shift);
  const i64 first_row = i64(blockIdx.x) * rows_per_block;
  const bool descending = p.descending != 0;
  const int row_len = int(p.row_len);
  const Word key_max = Packed ? (Word(1) << p.key_bits) - 1 : Word(~Word(0));

  // A row's offsets, cached: consecutive items of a thread are mostly in one row.
  i64 cached_row = -1;
  RowOffsets o{};
  const auto offsets_of = [&](i64 row) {
    if (row != cached_row) o = row_offsets(p, row), cached_row = row;
    return o;
  };

  Word w[Items];
  u32 e[Items];  // the tile index (unpacked only)
  bool all[Items];
  if (rows_per_block == 1) {
    // One row (the long rows): its loads unconditional (past its end: its last element), so
    // they are in flight together.
    const i64 at = offsets_of(first_row).in;
    Elem raw[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int j = striped_element<Items>(i);
      raw[i] = in[at + i64(j < row_len ? j : row_len - 1) * p.in_row_stride];
    }
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int el = striped_element<Items>(i);
      const Word key = el < row_len
                           ? Word(sort_key(raw_bits(raw[i]), p.dtype, p.key_bits, descending))
                           : key_max;
      w[i] = Packed ? (key << kKeyShift) | Word(el) : key;
    }
  } else {
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const int el = striped_element<Items>(i);
      const int r = el >> seg_shift, j = int(u32(el) & seg_mask);
      const i64 row = first_row + r;
      Word key = key_max;
      if (r < rows_per_block && row < p.rows && j < row_len)
        key = Word(sort_key(raw_bits(in[offsets_of(row).in + j * p.in_row_stride]), p.dtype,
                            p.key_bits, descending));
      w[i] = Packed ? (key << kKeyShift) | Word(el) : key;
    }
  }
#pragma unroll
  for (int i = 0; i < Items; ++i) e[i] = u32(striped_element<Items>(i)), all[i] = true;
  const auto index_of = [&](int i) { return Packed ? u32(w[i]) & ((1u << kIndexBits) - 1) : e[i]; };

  int row_bits = 0;
  while ((kTile >> (seg_shift + row_bits)) > 1) ++row_bits;
  const int key_passes = p.key_bits / kDigitBits;
  const int passes = key_passes + (row_bits + kDigitBits - 1) / kDigitBits;
  for (int pass = 0; pass < passes; ++pass) {
    u32 digit[Items], rank[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i)
      digit[i] =
          pass < key_passes
              ? u32(w[i] >> (kKeyShift + kDigitBits * pass)) & (kDigits - 1)
              : ((index_of(i) >> seg_shift) >> (kDigitBits * (pass - key_passes))) & (kDigits - 1);
    rank_digits<Items>(rs, digit, all, rank);
    const bool last = pass == passes - 1;
    if (!last) {
      exchange_by_rank(xwords, w, rank);
      if constexpr (!Packed) exchange_by_rank(xpos, e, rank);
      continue;
    }
    // The last pass leaves the tile indices in rank order in xpos (no thread reads the words
    // it overlays any more: the previous exchange and the ranking end synchronised).
#pragma unroll
    for (int i = 0; i < Items; ++i) xpos[rank[i]] = index_of(i);
    __syncthreads();
  }

  // Sorted slot s holds row s / segment's element s % segment: consecutive threads write
  // consecutive elements of a row.
  for (int s = threadIdx.x; s < kTile; s += kRankThreads) {
    const int r = s >> seg_shift, j = int(u32(s) & seg_mask);
    const i64 row = first_row + r;
    if (r >= rows_per_block || row >= p.rows || j >= row_len) continue;
    const RowOffsets ro = offsets_of(row);
    const i64 from = xpos[s] & seg_mask;
    values[ro.values + j * p.values_row_stride] = in[ro.in + from * p.in_row_stride];
    indices[ro.indices + j * p.indices_row_stride] = from;
  }
}

template <typename Word, typename Elem, int Items, bool Packed>
void launch_rows_items(const abi::SortParams& p, const GpuLaunch& l) {
  const i64 rows_per_block = p.tile / p.segment;
  const unsigned blocks = unsigned((p.rows + rows_per_block - 1) / rows_per_block);
  const size_t smem = kRankSharedBytes + size_t(kRankThreads) * Items * sizeof(Word);
  const SortBuffers<Elem> b = sort_buffers<Elem>(l);
  sort_rows_kernel<Word, Elem, Items, Packed>
      <<<blocks, kRankThreads, smem, static_cast<Stream>(l.stream)>>>(p, b.values, b.indices, b.in);
}

// Items per thread: the fewest that hold the tile (4 at least: smaller tiles are rare and
// short, so they share the 1024-element kernel with pads).
template <typename Word, typename Elem, bool Packed>
void launch_rows(const abi::SortParams& p, const GpuLaunch& l) {
  if (p.tile <= kRankThreads * 4) return launch_rows_items<Word, Elem, 4, Packed>(p, l);
  if (p.tile <= kRankThreads * 8) return launch_rows_items<Word, Elem, 8, Packed>(p, l);
  return launch_rows_items<Word, Elem, 16, Packed>(p, l);
}

}  // namespace

ElementwiseLaunchResult launch_family(const abi::SortParams& p, const GpuLaunch& l) {
  ElementwiseLaunchResult result;
  result.call = "sort launch";
  result.path = ElementwisePath::kGeneric;
  if (p.rows == 0 || p.row_len == 0) return result;
  if (p.variant == abi::kSortRadix) {
    launch_sort_radix(p, l);
  } else if (p.variant == abi::kSortOnesweep) {
    launch_sort_onesweep(p, l);
  } else if (p.variant == abi::kSortSelect) {
    launch_sort_select(p, l);
  } else {
    // Keys of up to 32 bits travel packed with their tile index in a word of twice their
    // width at most (8- and 16-bit keys in 32 bits, 32-bit keys in 64); 64-bit keys alone.
    with_key_types(p.key_bits, [&](auto types) {
      using T = decltype(types);
      constexpr bool kPacked = sizeof(typename T::Key) == 4;
      using Word = std::conditional_t<kPacked && sizeof(typename T::Elem) <= 2, u32, u64>;
      launch_rows<Word, typename T::Elem, kPacked>(p, l);
    });
  }
  result.error = int(last_launch_error());
  return result;
}

}  // namespace nbx::gpu
