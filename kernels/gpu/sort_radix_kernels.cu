// The sort family's radix variant on CUDA/HIP (abi::kSortRadix; semantics
// backends/host/host_sort.cpp): rows of any length, in the workspace the wrapper allocated
// (layout abi::sort_workspace_words): keys and positions prepared once, then one pass per 4-bit
// digit, least significant first, each of four kernels — (1) each tile of 2048 elements counts
// its digits and adds them to its chunk's total, (2) a block per row scans the row's chunk
// totals, (3) a block per chunk of 4096 counts scans them (digit by digit, tile by tile) into
// offsets from its total's prefix, (4) each tile ranks its elements by digit in tile order (a
// thread owns 8 consecutive elements) and scatters them to their offsets: stable, so after the
// last digit the row is in key order with ties in input order. Every pass reads and writes whole
// arrays, between two halves of the workspace; the pass count is even, so the result ends in
// the first half, from which the values and positions are written out. The onesweep variant
// (sort_onesweep_kernels.cu) is faster where it serves; this one takes any row length.
#include "kernels/gpu/sort_keys.cuh"
#include "kernels/gpu/sort_launchers.hpp"

namespace nbx::gpu {
namespace {

using namespace sort;

constexpr int kRadixThreads = 256;
constexpr int kRadixItems = int(abi::kSortRadixTile) / kRadixThreads;  // 8
constexpr int kBuckets = abi::kSortRadixBuckets;
constexpr int kScanThreads = 1024;

// ---- radix: the workspace's arrays ----

template <typename Key>
struct Workspace {
  Key* keys[2];
  u32* pos[2];
  u32* counts;  // [row][digit][tile]
  u32* totals;  // [pass][row][chunk]: the counts' chunk totals, zero before the first pass
  i64 total_words;

  NBX_GPU_HOST_DEVICE static Workspace at(u32* words, const abi::SortParams& p) {
    constexpr i64 kw = sizeof(Key) / 4;
    const i64 n = p.rows * p.row_len;
    Workspace w;
    w.keys[0] = reinterpret_cast<Key*>(words);
    w.keys[1] = reinterpret_cast<Key*>(words + n * kw);
    w.pos[0] = words + 2 * n * kw;
    w.pos[1] = w.pos[0] + n;
    w.counts = w.pos[1] + n;
    w.totals = w.counts + p.rows * kBuckets * abi::sort_radix_tiles(p.row_len);
    w.total_words =
        i64(p.key_bits / abi::kSortRadixBits) * p.rows * abi::sort_scan_chunks(p.row_len);
    return w;
  }
};

template <typename Key, typename Elem>
__global__ void radix_prepare_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, const Elem* in,
                                     Workspace<Key> w) {
  const i64 n = p.rows * p.row_len, step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    i64 row = e;
    const i64 j = next_coordinate(row, p.row_len);
    const RowOffsets o = row_offsets(p, row);
    w.keys[0][e] = Key(
        sort_key(raw_bits(in[o.in + j * p.in_row_stride]), p.dtype, p.key_bits, p.descending != 0));
    w.pos[0][e] = u32(j);
  }
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < w.total_words; e += step)
    w.totals[e] = 0;
}

// The tile of block b: its row and its index within the row.
NBX_GPU_INLINE void tile_of(const abi::SortParams& p, i64 tiles, i64& row, i64& tile) {
  row = i64(blockIdx.x);
  tile = next_coordinate(row, tiles);
}

template <typename Key>
__global__ void __launch_bounds__(kRadixThreads)
    radix_count_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Workspace<Key> w, int src,
                       int shift, i64 tiles, u32* totals, i64 chunks) {
  __shared__ u32 hist[kBuckets];
  if (threadIdx.x < kBuckets) hist[threadIdx.x] = 0;
  __syncthreads();
  i64 row, tile;
  tile_of(p, tiles, row, tile);
  const i64 begin = tile * abi::kSortRadixTile;
  const Key* keys = w.keys[src] + row * p.row_len;
  for (int i = threadIdx.x; i < abi::kSortRadixTile; i += kRadixThreads) {
    const i64 j = begin + i;
    if (j < p.row_len) atomicAdd(&hist[int(keys[j] >> shift) & (kBuckets - 1)], 1u);
  }
  __syncthreads();
  if (threadIdx.x < kBuckets) {
    const i64 at = i64(threadIdx.x) * tiles + tile;  // the entry's place in the row's counts
    w.counts[row * kBuckets * tiles + at] = hist[threadIdx.x];
    if (hist[threadIdx.x] != 0)
      atomicAdd(&totals[row * chunks + at / abi::kSortScanChunk], hist[threadIdx.x]);
  }
}

// An exclusive scan of one value per thread over the block; `total` receives the sum.
template <int Threads>
NBX_GPU_INLINE u32 block_exclusive_scan(u32 v, u32* scratch, u32& total) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int d = 1; d < Threads; d <<= 1) {
    const u32 add = threadIdx.x >= unsigned(d) ? scratch[threadIdx.x - d] : 0u;
    __syncthreads();
    scratch[threadIdx.x] += add;
    __syncthreads();
  }
  total = scratch[Threads - 1];
  const u32 inclusive = scratch[threadIdx.x];
  __syncthreads();
  return inclusive - v;
}

// Each row's chunk totals into exclusive prefixes, in place: a block per row (rows have few
// chunks: 128 for one row of 2^26 elements).
__global__ void __launch_bounds__(kScanThreads)
    radix_scan_totals_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, u32* totals,
                             i64 chunks) {
  __shared__ u32 scratch[kScanThreads];
  for (i64 row = blockIdx.x; row < p.rows; row += gridDim.x) {
    u32* c = totals + row * chunks;
    u32 carry = 0;
    for (i64 base = 0; base < chunks; base += kScanThreads) {
      const i64 e = base + threadIdx.x;
      const u32 v = e < chunks ? c[e] : 0u;
      u32 total;
      const u32 before = block_exclusive_scan<kScanThreads>(v, scratch, total);
      if (e < chunks) c[e] = carry + before;
      carry += total;
    }
  }
}

// Each chunk of kSortScanChunk digit counts (block b: row b / chunks, chunk b % chunks) into
// exclusive offsets within its row, from its chunk's prefix: 1024 threads, 4 counts each.
__global__ void __launch_bounds__(kScanThreads)
    radix_scan_chunks_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, u32* counts,
                             const u32* totals, i64 tiles, i64 chunks) {
  __shared__ u32 scratch[kScanThreads];
  constexpr int kPer = int(abi::kSortScanChunk) / kScanThreads;
  i64 row = i64(blockIdx.x);
  const i64 chunk = next_coordinate(row, chunks);
  const i64 len = kBuckets * tiles;
  u32* c = counts + row * len;
  const i64 first = chunk * abi::kSortScanChunk + i64(threadIdx.x) * kPer;
  u32 v[kPer], sum = 0;
  for (int i = 0; i < kPer; ++i) {
    v[i] = first + i < len ? c[first + i] : 0u;
    sum += v[i];
  }
  u32 total;
  u32 at = totals[row * chunks + chunk] + block_exclusive_scan<kScanThreads>(sum, scratch, total);
  for (int i = 0; i < kPer; ++i) {
    if (first + i < len) c[first + i] = at;
    at += v[i];
  }
}

template <typename Key>
__global__ void __launch_bounds__(kRadixThreads)
    radix_scatter_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Workspace<Key> w, int src,
                         int shift, i64 tiles) {
  // rank[d][t]: thread t's count of digit d, then (scanned) its first rank within the tile.
  __shared__ u32 rank[kBuckets * kRadixThreads];
  __shared__ u32 scratch[kRadixThreads];
  __shared__ u32 digit_start[kBuckets];
  i64 row, tile;
  tile_of(p, tiles, row, tile);
  const i64 base = row * p.row_len;
  const i64 first = tile * abi::kSortRadixTile + i64(threadIdx.x) * kRadixItems;
  Key k[kRadixItems];
  u32 at[kRadixItems];
  for (int d = 0; d < kBuckets; ++d) rank[d * kRadixThreads + threadIdx.x] = 0;
  for (int i = 0; i < kRadixItems; ++i) {
    const i64 j = first + i;
    if (j < p.row_len) {
      k[i] = w.keys[src][base + j];
      at[i] = w.pos[src][base + j];
      ++rank[(int(k[i] >> shift) & (kBuckets - 1)) * kRadixThreads + threadIdx.x];
    }
  }
  __syncthreads();
  // Thread t scans the 16 consecutive entries [16 t, 16 t + 16) of rank (digit-major order),
  // then adds the block's prefix of the threads before it.
  u32 local[kBuckets];
  u32 sum = 0;
  for (int e = 0; e < kBuckets; ++e) {
    local[e] = sum;
    sum += rank[threadIdx.x * kBuckets + e];
  }
  u32 total;
  const u32 before = block_exclusive_scan<kRadixThreads>(sum, scratch, total);
  for (int e = 0; e < kBuckets; ++e) rank[threadIdx.x * kBuckets + e] = before + local[e];
  __syncthreads();
  if (threadIdx.x < kBuckets) digit_start[threadIdx.x] = rank[threadIdx.x * kRadixThreads];
  __syncthreads();
  const int dst = src ^ 1;
  for (int i = 0; i < kRadixItems; ++i) {
    const i64 j = first + i;
    if (j >= p.row_len) break;
    const int d = int(k[i] >> shift) & (kBuckets - 1);
    const u32 r = rank[d * kRadixThreads + threadIdx.x]++;
    const i64 to = i64(w.counts[(row * kBuckets + d) * tiles + tile]) + (r - digit_start[d]);
    w.keys[dst][base + to] = k[i];
    w.pos[dst][base + to] = at[i];
  }
}

template <typename Key, typename Elem>
__global__ void radix_emit_kernel(const NBX_GPU_GRID_CONSTANT abi::SortParams p, Elem* values,
                                  long long* indices, const Elem* in, Workspace<Key> w) {
  const i64 n = p.rows * p.row_len, step = i64(gridDim.x) * blockDim.x;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    i64 row = e;
    const i64 j = next_coordinate(row, p.row_len);
    const RowOffsets o = row_offsets(p, row);
    const i64 from = w.pos[0][e];
    values[o.values + j * p.values_row_stride] = in[o.in + from * p.in_row_stride];
    indices[o.indices + j * p.indices_row_stride] = from;
  }
}

template <typename Key, typename Elem>
void launch_radix(const abi::SortParams& p, const GpuLaunch& l) {
  const Stream s = static_cast<Stream>(l.stream);
  const auto [values, indices, in] = sort_buffers<Elem>(l);
  const i64 n = p.rows * p.row_len, tiles = abi::sort_radix_tiles(p.row_len);
  const i64 chunks = abi::sort_scan_chunks(p.row_len);
  const Workspace<Key> w = Workspace<Key>::at(static_cast<u32*>(l.buffers[3].address), p);
  radix_prepare_kernel<Key, Elem><<<grid_stride_blocks(n, 256, l), 256, 0, s>>>(p, in, w);
  const unsigned tile_blocks = unsigned(p.rows * tiles);
  const unsigned chunk_blocks = unsigned(p.rows * chunks);
  const unsigned row_blocks = unsigned(p.rows < 65535 ? p.rows : 65535);
  int src = 0;
  for (int shift = 0; shift < p.key_bits; shift += abi::kSortRadixBits) {
    u32* totals = w.totals + i64(shift / abi::kSortRadixBits) * p.rows * chunks;
    radix_count_kernel<Key>
        <<<tile_blocks, kRadixThreads, 0, s>>>(p, w, src, shift, tiles, totals, chunks);
    radix_scan_totals_kernel<<<row_blocks, kScanThreads, 0, s>>>(p, totals, chunks);
    radix_scan_chunks_kernel<<<chunk_blocks, kScanThreads, 0, s>>>(p, w.counts, totals, tiles,
                                                                   chunks);
    radix_scatter_kernel<Key><<<tile_blocks, kRadixThreads, 0, s>>>(p, w, src, shift, tiles);
    src ^= 1;
  }
  radix_emit_kernel<Key, Elem>
      <<<grid_stride_blocks(n, 256, l), 256, 0, s>>>(p, values, indices, in, w);
}

}  // namespace

void launch_sort_radix(const abi::SortParams& p, const GpuLaunch& l) {
  with_key_types(p.key_bits, [&](auto types) {
    using T = decltype(types);
    launch_radix<typename T::Key, typename T::Elem>(p, l);
  });
}

}  // namespace nbx::gpu
