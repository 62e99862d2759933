// Parameter blocks of the kernel families beyond elementwise and reduce: softmax, norm,
// scan, matmul, fill, and the two diagnostic families timestamp and copy_probe. Same rules as
// kernel_abi.hpp (included from there): fixed-width PODs, element offsets and strides in elements,
// 64-bit indices.
#pragma once

#include <cstdint>

namespace nbx::abi {

// ---- "softmax": one row = the elements along the softmax dim ----
enum SoftmaxOp : std::int32_t { kSoftmax_softmax = 0, kSoftmax_log_softmax = 1 };
enum SoftmaxVariant : std::int32_t {
  kSoftmaxOnePass = 0,  // the row fits in shared memory: read once
  kSoftmaxLooped = 1,   // online max/sum over the row, then a second pass to write
  kSoftmaxRows = 2,     // contiguous rows (CUDA/HIP softmax_rows_fast): in registers up to
                        // kSoftmaxRowsMaxGroup × 8 vectors, a 1024-thread block per longer row
};
// What every backend's kernels of this family keep within, so the wrapper's one-pass choice
// holds on each: at most kSoftmaxMaxThreads threads per block and kSoftmaxScratchPerThread
// bytes of shared scratch each besides the row cache, and a row cache within
// min(shared_memory.per_block, kSoftmaxSharedCap) less that scratch.
inline constexpr int kSoftmaxMaxThreads = 256;
inline constexpr int kSoftmaxScratchPerThread = 32;
inline constexpr std::int64_t kSoftmaxSharedCap = 48 * 1024;  // CUDA/HIP without opt-in
// The rows variant's register kernel: groups of up to 512 threads of 8 16-byte vectors; a row
// longer than that takes one 1024-thread block, so the variant needs row_tile >= 1024 there.
inline constexpr int kSoftmaxRowsMaxGroup = 512;
inline constexpr int kSoftmaxRowsMaxVecs = 8;
inline constexpr int kSoftmaxRowsLoopBlock = 1024;
// Buffers: [0] out, [1] in, [2] mask (bool, true = excluded) when has_mask.
// y = softmax(scale * x) over each row with masked elements excluded; a fully masked row
// gives zeros (softmax) or -inf (log_softmax).
struct SoftmaxParams {
  std::int32_t op;
  std::int32_t in_dtype;
  std::int32_t out_dtype;
  std::int32_t accumulate_dtype;
  std::int32_t outer_ndim;
  std::int32_t has_mask;
  std::int32_t variant;   // SoftmaxVariant
  std::int32_t row_tile;  // lanes per row, ≤ reduce.tile_max and max_threads_per_block
  std::int64_t rows;
  std::int64_t row_len;
  std::int64_t outer_sizes[kMaxDims];
  std::int64_t in_offset;
  std::int64_t in_outer_strides[kMaxDims];
  std::int64_t in_row_stride;
  std::int64_t out_offset;
  std::int64_t out_outer_strides[kMaxDims];
  std::int64_t out_row_stride;
  std::int64_t mask_offset;
  std::int64_t mask_outer_strides[kMaxDims];
  std::int64_t mask_row_stride;
  double scale;
};

// ---- "norm": statistics over rows of a contiguous input ----
enum NormVariant : std::int32_t {
  kNormGeneral = 0,  // lane groups per row, any op
  kNormRows = 1,     // layer/rms norm rows held in registers (CUDA/HIP norm_rows_fast)
};
enum NormOp : std::int32_t {
  kNorm_layer_norm = 0,  // rows = numel / row_len; weight/bias index = position in row
  kNorm_rms_norm = 1,
  kNorm_group_norm = 2,  // rows = N * groups; row_len = (C / groups) * inner
  kNorm_batch_norm = 3,  // inference: running statistics, no reduction; rows = N
};
// Buffers: [0] out, [1] in, [2] weight, [3] bias, [4] running_mean, [5] running_var
// (an empty DeviceMemory where absent). For group/batch norm, element k of a row has
// channel (row % groups) * (channels / groups) + k / inner (group) or k / inner (batch).
struct NormParams {
  std::int32_t op;
  std::int32_t in_dtype;
  std::int32_t out_dtype;
  std::int32_t accumulate_dtype;
  std::int32_t has_weight;
  std::int32_t has_bias;
  std::int32_t row_tile;
  std::int32_t param_dtype;  // dtype of weight, bias and running statistics
  std::int32_t variant;      // NormVariant, chosen by the wrapper
  std::int32_t reserved;
  std::int64_t rows;
  std::int64_t row_len;
  std::int64_t channels;
  std::int64_t inner;
  std::int64_t groups;
  double eps;
};

// ---- "scan": inclusive scans along one dim ----
enum ScanOp : std::int32_t {
  kScan_cumsum = 0,
  kScan_cumprod = 1,
  kScan_cummax = 2,
  kScan_cummin = 3,
  kScan_logcumsumexp = 4,  // log Σ exp, as a running maximum and a sum rescaled to it
};
// How a scan's rows are laid on the device: the wrapper's plan (core/ops/scan.cpp, shown by
// `nbx explain`) from the row count, the row length, the layout and the device's SM count.
enum ScanVariant : std::int32_t {
  kScanLanes = 0,    // `lanes` lanes per row, many rows per block (Vulkan: 1, a row each)
  kScanBlock = 1,    // a block (workgroup) per row: few long rows
  kScanChunked = 2,  // each row in chunks of `chunk_len` elements, a block each (CUDA/HIP)
};
// The CUDA/HIP scan kernels' shapes, which the plan sizes lanes and chunks by: a lane takes
// kScanLaneItems consecutive elements, at most kScanMaxLanes lanes share a row (the narrowest
// warp of any target), and the block and chunked kernels walk rows in tiles of kScanTile.
inline constexpr int kScanLaneItems = 4;
inline constexpr int kScanMaxLanes = 32;
inline constexpr std::int64_t kScanTile = 512 * 16;
// Buffers: [0] out, [1] in, [2] indices (int64; cummax/cummin only).
struct ScanParams {
  std::int32_t op;
  std::int32_t in_dtype;
  std::int32_t out_dtype;
  std::int32_t accumulate_dtype;
  std::int32_t outer_ndim;
  std::int32_t variant;  // ScanVariant
  std::int32_t lanes;    // kScanLanes: a power of two in [1, kScanMaxLanes]
  std::int32_t reserved;
  std::int64_t rows;
  std::int64_t row_len;
  std::int64_t outer_sizes[kMaxDims];
  std::int64_t in_offset;
  std::int64_t in_outer_strides[kMaxDims];
  std::int64_t in_row_stride;
  std::int64_t out_offset;
  std::int64_t out_outer_strides[kMaxDims];
  std::int64_t out_row_stride;
  std::int64_t index_offset;
  std::int64_t index_outer_strides[kMaxDims];
  std::int64_t index_row_stride;
  std::int64_t chunk_len;  // kScanChunked: a multiple of kScanTile below row_len
};

// ---- "matmul": out[b] = alpha * A[b] @ B[b] + beta * addend[b] ----
// The variant is the wrapper's choice (core/ops/linalg.cpp, visible in `nbx explain`); a
// backend offers a variant by answering has_kernel("matmul.<name>") (plain "matmul" is the
// tiled kernel). A variant the backend lacks is refused by name, never swapped.
enum MatmulVariant : std::int32_t {
  kMatmulTiled = 0,       // kernels/gpu (CUDA, HIP) or kernels/vulkan shared-memory tiles
  kMatmulVendorBlas = 1,  // "matmul.blas": CUDA's cuBLASLt
  kMatmulCoopMatrix = 2,  // "matmul.coopmat": Vulkan VK_KHR_cooperative_matrix
};
// Batch dims are broadcast through strides (stride 0); A is m×k, B is k×n, out m×n, each
// with a row and a column stride (a transposed operand is just swapped strides).
// Buffers: [0] out, [1] A, [2] B, [3] addend (empty when has_addend is 0).
struct MatmulParams {
  std::int32_t a_dtype;  // A and B share a dtype
  std::int32_t out_dtype;
  std::int32_t accumulate_dtype;
  std::int32_t batch_ndim;
  std::int32_t has_addend;
  std::int32_t addend_dtype;
  std::int32_t tile_m;  // chosen to fit the device's shared memory
  std::int32_t tile_n;
  std::int32_t tile_k;
  std::int32_t num_stages;
  std::int32_t variant;  // MatmulVariant, chosen by the wrapper
  std::int32_t reserved;
  std::int64_t m, n, k;
  std::int64_t batch;
  std::int64_t batch_sizes[kMaxDims];
  std::int64_t a_offset, a_batch_strides[kMaxDims], a_row_stride, a_col_stride;
  std::int64_t b_offset, b_batch_strides[kMaxDims], b_row_stride, b_col_stride;
  std::int64_t out_offset, out_batch_strides[kMaxDims], out_row_stride, out_col_stride;
  std::int64_t addend_offset, addend_batch_strides[kMaxDims], addend_row_stride, addend_col_stride;
  double alpha;
  double beta;
};

// ---- "fill": values computed from the element's index ----
enum FillOp : std::int32_t {
  kFill_arange = 0,    // start + i * step
  kFill_linspace = 1,  // start + i * step for i < n/2, end - (n - 1 - i) * step after
  kFill_triu = 2,      // in where col - row >= diagonal, else 0 (last two dims)
  kFill_tril = 3,      // in where col - row <= diagonal, else 0
  kFill_eye = 4,       // 1 where row == col, else 0 (2 dims; no input)
};
// Buffers: [0] out, [1] in (triu/tril only).
struct FillParams {
  std::int32_t op;
  std::int32_t out_dtype;
  std::int32_t in_dtype;
  std::int32_t ndim;
  std::int64_t numel;
  std::int64_t sizes[kMaxDims];
  std::int64_t out_offset;
  std::int64_t out_strides[kMaxDims];
  std::int64_t in_offset;
  std::int64_t in_strides[kMaxDims];
  ScalarValue start;
  ScalarValue step;
  ScalarValue end;
  std::int64_t diagonal;
};

// ---- "gather": each output element copies one input element picked by an index ----
// One strided form serves index_select, gather, take_along_dim and embedding: output
// element at coordinates (c0, …, cn) (shape `sizes`) reads the index at
// index_offset + Σ ck · index_strides[k], checks it against [0, bound) (with
// `wrap_negative`, [-bound, bound), a negative index counting from the end once, as
// x[idx] and take do; PyTorch's index_select/gather/embedding refuse negatives), and copies
// the element at src_offset + Σ ck · src_strides[k] + index · src_index_stride. The indexed
// dim of the input has stride 0 in src_strides (it is replaced by the index); a dim the index
// does not vary along has index stride 0. The element is copied bit for bit (the output has
// the input's dtype). A bad index is a device fault (FaultRecord: this family, the op, the
// index, the bound and the index's flat position Σ ck · index_positions[k]); its output
// element is left as it was and nothing out of range is read.
// Buffers: [0] out, [1] input, [2] index (int32 or int64).
enum GatherOp : std::int32_t {
  kGather_index_select = 0,
  kGather_gather = 1,
  kGather_take_along_dim = 2,
  kGather_embedding = 3,
  kGather_take = 4,
};
enum GatherVariant : std::int32_t {
  kGatherStrided = 0,  // element by element, any strides
  // Rows of the last dim, n = sizes[ndim - 1] elements, where the output and the input run
  // along it with stride 1 and the index does not vary along it (index stride 0; n = 1
  // needs no strides): output row r is one contiguous copy of the input row its one index
  // picks. A bad index faults with the position of the row's first element
  // (Σ ck · index_positions[k], c_{ndim-1} = 0) and leaves the whole row as it was. Rows hold
  // at most kGatherRowsMaxLen elements. CUDA/HIP: a group of up to 32 threads per row (per
  // slice of 8 copy units a thread, for long rows), several a block, the index read and
  // checked once per group, copying in the widest of 16/8/4/2/1-byte units that divides the
  // row's bytes and every row start (buffer address + offset · itemsize).
  kGatherRows = 1,
};
inline constexpr std::int64_t kGatherRowsMaxLen = std::int64_t(1) << 28;  // 2^31 bytes at 8
struct GatherParams {
  std::int32_t op;  // GatherOp
  std::int32_t dtype;
  std::int32_t index_dtype;  // int32 or int64
  std::int32_t ndim;
  std::int32_t wrap_negative;
  std::int32_t variant;  // GatherVariant
  std::int64_t numel;
  std::int64_t bound;  // the input's size along the indexed dim (> 0 unless numel is 0)
  std::int64_t sizes[kMaxDims];
  std::int64_t out_offset;
  std::int64_t out_strides[kMaxDims];
  std::int64_t src_offset;
  std::int64_t src_strides[kMaxDims];
  std::int64_t src_index_stride;
  std::int64_t index_offset;
  std::int64_t index_strides[kMaxDims];
  std::int64_t index_positions[kMaxDims];  // row-major strides of the index's own shape
};

// ---- "sort": every row sorted, stably, by an order-preserving transform of its keys ----
// A row is the elements along the sorted dim. Each key becomes an unsigned integer of
// `key_bits` bits whose order is the value order PyTorch sorts by: integers by their value,
// floats by their value with -0 equal to +0 and every NaN equal to every other and above
// +inf (NaN last ascending, first descending); `descending` inverts the key. Ties keep their
// input order (the row position is the second key), so every backend gives the same indices.
// The sorted values are the input's elements copied bit for bit (NaN payloads survive).
// kSort_topk writes only the first k of each sorted row (values and indices hold k elements
// along the row): the k smallest keys, ties by position — topk's result, largest by
// `descending`.
enum SortOp : std::int32_t { kSort_sort = 0, kSort_topk = 1 };
enum SortVariant : std::int32_t {
  kSortRows = 0,      // a row per `segment`-element slice of a tile of `tile` elements, tile /
                      // segment rows a block: a block radix sort (8-bit digits ranked in registers)
  kSortRadix = 1,     // rows of any length: least-significant-digit radix passes of
                      // kSortRadixBits bits over a workspace (histograms per tile, a scan per
                      // row, a stable scatter), then the values and indices written out
  kSortOnesweep = 2,  // rows of any length below 2^30 (CUDA/HIP, Vulkan): one histogram of every
                      // digit up front, then one pass per kSortOnesweepBits-bit digit whose
                      // tiles find their offsets by decoupled look-back (Adinets & Merrill,
                      // "Onesweep", 2022); the last pass writes the values and indices
  kSortSelect = 3,    // kSort_topk only, rows below 2^31: a block per row narrows the k-th
                      // key by digit histograms, most significant first, until the keys at or
                      // below it fit `tile` candidates; gathers those in row order (the k-th
                      // key's ties by position) and sorts them in shared memory
};
// The select variant: k at most kSortSelectMaxK; `tile` the candidates a block holds, a power
// of two in [k, sort_select_candidates(key_bits)] that the plan fits to shared memory.
inline constexpr std::int64_t kSortSelectMaxK = 1024;
constexpr std::int64_t sort_select_candidates(std::int32_t key_bits) {
  return key_bits > 32 ? 2048 : 4096;
}
// The rows variant's largest tile: a power of two whose keys and positions fit the shared
// memory of every target without opting in (4096 × (8 + 4) bytes = 48 KB).
inline constexpr std::int64_t kSortRowsTileMax = 4096;
// The radix variant: 4-bit digits, tiles of kSortRadixTile elements (a block of 256 threads
// × 8 consecutive elements each).
inline constexpr int kSortRadixBits = 4;
inline constexpr int kSortRadixBuckets = 1 << kSortRadixBits;
inline constexpr std::int64_t kSortRadixTile = 2048;
// Keys of 8/16/32-bit dtypes take one 32-bit word, of 64-bit dtypes two.
constexpr std::int64_t sort_key_words(std::int32_t key_bits) {
  return key_bits > 32 ? 2 : 1;
}
// A pass scans each row's digit counts in chunks of kSortScanChunk: every chunk's total is
// added up by the count kernel (an atomic add per digit and tile), the totals of a row are
// scanned, then every chunk is scanned from its total's prefix — all in parallel.
inline constexpr std::int64_t kSortScanChunk = 4096;
// The radix variant's workspace, in 32-bit words, laid out in this order: keys A and keys B
// (rows × row_len × key words each), positions A and positions B (rows × row_len each), the
// digit counts (rows × kSortRadixBuckets × tiles per row), and one set of chunk totals per
// pass (passes × rows × chunks per row; zero before the first pass).
constexpr std::int64_t sort_radix_tiles(std::int64_t row_len) {
  return (row_len + kSortRadixTile - 1) / kSortRadixTile;
}
constexpr std::int64_t sort_scan_chunks(std::int64_t row_len) {
  return (kSortRadixBuckets * sort_radix_tiles(row_len) + kSortScanChunk - 1) / kSortScanChunk;
}
constexpr std::int64_t sort_workspace_words(std::int64_t rows, std::int64_t row_len,
                                            std::int32_t key_bits) {
  const std::int64_t n = rows * row_len;
  return 2 * n * sort_key_words(key_bits) + 2 * n +
         rows * kSortRadixBuckets * sort_radix_tiles(row_len) +
         (key_bits / kSortRadixBits) * rows * sort_scan_chunks(row_len);
}
// The onesweep variant: 8-bit digits, tiles of kSortOnesweepTile elements (a block of 256
// threads × 16). Its workspace, in 32-bit words, in this order: keys A and keys B (rows ×
// row_len × key words each), positions A and positions B (rows × row_len each), the digit
// offsets (rows × passes × buckets: each row's exclusive prefix of every digit's count), one
// tile counter per pass, and the tiles' look-back status (passes × rows × tiles × buckets
// words: a 2-bit flag over a 30-bit count, so a row holds fewer than 2^30 elements). All of it
// is written by the launch before it is read.
inline constexpr int kSortOnesweepBits = 8;
inline constexpr int kSortOnesweepBuckets = 1 << kSortOnesweepBits;
inline constexpr std::int64_t kSortOnesweepTile = 4096;
inline constexpr std::int64_t kSortOnesweepMaxRow = std::int64_t(1) << 30;
constexpr std::int64_t sort_onesweep_passes(std::int32_t key_bits) {
  return key_bits / kSortOnesweepBits;
}
constexpr std::int64_t sort_onesweep_tiles(std::int64_t row_len) {
  return (row_len + kSortOnesweepTile - 1) / kSortOnesweepTile;
}
constexpr std::int64_t sort_onesweep_workspace_words(std::int64_t rows, std::int64_t row_len,
                                                     std::int32_t key_bits) {
  const std::int64_t n = rows * row_len, passes = sort_onesweep_passes(key_bits);
  return 2 * n * sort_key_words(key_bits) + 2 * n + rows * passes * kSortOnesweepBuckets + passes +
         passes * rows * sort_onesweep_tiles(row_len) * kSortOnesweepBuckets;
}
// The workspace a variant takes (kSortRows: none).
constexpr std::int64_t sort_variant_workspace_words(std::int32_t variant, std::int64_t rows,
                                                    std::int64_t row_len, std::int32_t key_bits) {
  return variant == kSortRadix      ? sort_workspace_words(rows, row_len, key_bits)
         : variant == kSortOnesweep ? sort_onesweep_workspace_words(rows, row_len, key_bits)
                                    : 0;
}
// The most workspace one launch takes, in words (2 GiB): larger row counts are launched in
// groups of rows (core/ops/sort.cpp).
inline constexpr std::int64_t kSortWorkspaceBudgetWords = std::int64_t(1) << 29;
// Buffers: [0] values (the input's dtype), [1] indices (int64), [2] the input, [3] the
// workspace (kSortRadix, kSortOnesweep; empty for kSortRows).
struct SortParams {
  std::int32_t op;  // SortOp
  std::int32_t dtype;
  std::int32_t descending;
  std::int32_t variant;   // SortVariant
  std::int32_t key_bits;  // 8 × the dtype's size
  std::int32_t outer_ndim;
  std::int64_t segment;  // kSortRows: the power of two >= row_len a row is sorted in
  std::int64_t tile;     // kSortRows: a power-of-two multiple of segment, <= kSortRowsTileMax;
                         // kSortSelect: the candidates a block holds
  std::int64_t rows;
  std::int64_t row_len;  // below 2^31 (positions are 32-bit)
  std::int64_t outer_sizes[kMaxDims];
  std::int64_t in_offset;
  std::int64_t in_outer_strides[kMaxDims];
  std::int64_t in_row_stride;
  std::int64_t values_offset;
  std::int64_t values_outer_strides[kMaxDims];
  std::int64_t values_row_stride;
  std::int64_t indices_offset;
  std::int64_t indices_outer_strides[kMaxDims];
  std::int64_t indices_row_stride;
  std::int64_t k;  // kSort_topk: the elements kept of each row, in [1, row_len]; else row_len
};

// ---- "scatter": index writes (scatter, index_add/copy/fill, index_put, compactions) ----
// An iteration space of `numel` elements (`sizes`, row-major): element c writes out element
// out_offset + Σ c_k·out_strides[k] + i·index_scale, where i is the index read at
// index_offset + Σ c_k·index_strides[k] (checked against [0, bound), negatives wrapped once
// first when wrap_negative), combined by `reduce` with the source element at
// src_offset + Σ c_k·src_strides[k] (all source strides 0: one scalar value). out and src
// share `dtype` (the wrapper converts). A bad index is a fault (position: Σ c_k·
// index_positions[k]) and nothing is written for it.
enum ScatterOp : std::int32_t {
  kScatter_scatter = 0,
  kScatter_scatter_add = 1,
  kScatter_scatter_reduce = 2,
  kScatter_index_add = 3,
  kScatter_index_copy = 4,
  kScatter_index_fill = 5,
  kScatter_index_put = 6,
  kScatter_masked_select = 7,
  kScatter_nonzero = 8,
  kScatter_one_hot = 9,
  kScatter_bincount = 10,
};
// How a source element combines with the destination: assign (a duplicate destination
// takes one of its writes: any in kScatterAtomic, the last in iteration order in
// kScatterSorted), add (bool: or), mul (bool: and), max, min (floats: NaN wins, as PyTorch's
// CPU kernels; integers exact).
enum ScatterReduce : std::int32_t {
  kScatterAssign = 0,
  kScatterAdd = 1,
  kScatterMul = 2,
  kScatterMax = 3,
  kScatterMin = 4,
};
enum ScatterVariant : std::int32_t {
  // One thread per iteration element, an atomic read-modify-write per destination element
  // (compare-and-swap on the element or its enclosing 32-bit word where no native atomic
  // exists). Float add and mul are not deterministic in order.
  kScatterAtomic = 0,
  // The deterministic pass: buffers [2] keys and [3] order hold the relative destination
  // offsets of the iteration elements sorted stably (int64, contiguous, `numel` each) and the
  // iteration element each came from. Sorted position j starts a segment when j = 0 or its key
  // differs from key j-1; the segment's first thread folds its run, in order, into the
  // destination element out_offset + key and writes it once (out_strides and index_scale are
  // unused: the keys hold the whole offset). Keys at index_offset, order at key_offset. A key
  // outside [0, bound) or an order entry outside [0, numel) is a fault; nothing is written
  // for it.
  kScatterSorted = 1,
  // The keys pass: buffer [0] is an int64 array receiving, at key_offset + e for iteration
  // element e, (accumulate_keys ? its key already there : 0) + Σ c_k·out_strides[k] +
  // i·index_scale, or -1 for a bad index (a fault) or a key already -1. No element of the
  // destination is touched; dtype is the int64 code.
  kScatterKeys = 2,
  // The destination-partitioned pass, three launches. The iteration elements are split
  // into `parts` runs of ceil(numel / parts) (the last one shorter); an element's bucket is
  // its destination offset relative to out_offset >> bucket_shift, a bad index's the last
  // one (`buckets`). Only elements of at most 4 bytes; relative offsets below 2^32 - 1. The
  // counts and starts are int32 arrays of (buckets + 1) · parts, bucket-major (entry
  // b · parts + j for bucket b and part j), at element 0 of their buffers; the pairs are
  // `numel` pairs of int32 words at element 0 of theirs (the relative offset, or 0xffffffff
  // for a bad index; the source bits zero-extended).
  //  - kPassCount, buffer [0] the counts (written whole), [2] the index: each part's
  //    elements per bucket; a bad index is a fault.
  //  - kPassPartition, buffer [0] the pairs, [1] src, [2] index, [3] the starts (the
  //    exclusive prefix of the counts, which the caller computes): part j's elements of
  //    bucket b go to pairs starts[b · parts + j] on, in any order. No fault is recorded.
  //  - kPassApply, buffer [0] out, [2] the pairs: each combined in order into out_offset +
  //    its offset as kScatterAtomic does (a bad index's pair skipped). Consecutive pairs share
  //    a bucket, so the read-modify-writes stay in the cache a bucket of destinations fits.
  kScatterPartitioned = 3,
};
enum ScatterPass : std::int32_t { kPassCount = 0, kPassPartition = 1, kPassApply = 2 };
// At most this many buckets (shared memory of the count and partition passes) and parts.
constexpr std::int64_t kScatterMaxBuckets = 1024;
constexpr std::int64_t kScatterMaxParts = 4096;
// Buffers: [0] out (kScatterKeys: the keys; kScatterPartitioned: the counts, the pairs),
// [1] src, [2] index (kScatterSorted: sorted keys; the apply pass: the pairs), [3] order
// (kScatterSorted; the partition pass: the starts; otherwise any buffer, unread).
struct ScatterParams {
  std::int32_t op;           // ScatterOp (names the fault)
  std::int32_t variant;      // ScatterVariant
  std::int32_t reduce;       // ScatterReduce (kScatterKeys: ignored)
  std::int32_t dtype;        // out's and src's dtype (kScatterKeys: int64)
  std::int32_t index_dtype;  // int32 or int64 (kScatterSorted: int64)
  std::int32_t ndim;
  std::int32_t wrap_negative;
  std::int32_t accumulate_keys;  // kScatterKeys
  std::int32_t pass;             // kScatterPartitioned: ScatterPass
  std::int32_t bucket_shift;     // kScatterPartitioned
  std::int64_t buckets;          // kScatterPartitioned: in [1, kScatterMaxBuckets]
  std::int64_t parts;            // kScatterPartitioned: in [1, kScatterMaxParts]
  std::int64_t numel;
  std::int64_t bound;        // indices (kScatterSorted: keys) lie in [0, bound)
  std::int64_t index_scale;  // destination elements per index step
  std::int64_t key_offset;   // kScatterKeys: where key 0 is written in buffer [0];
                             // kScatterSorted: where order 0 is read in buffer [3]
  std::int64_t sizes[kMaxDims];
  std::int64_t out_offset;
  std::int64_t out_strides[kMaxDims];
  std::int64_t src_offset;
  std::int64_t src_strides[kMaxDims];
  std::int64_t index_offset;
  std::int64_t index_strides[kMaxDims];
  std::int64_t index_positions[kMaxDims];
};

// ---- "search": binary search of values in sorted rows (searchsorted, bucketize) ----
// Value element c (`sizes`, row-major) is searched in the row starting at
// seq_offset + Σ c_k·seq_strides[k], seq_len elements seq_stride apart, exactly as PyTorch's
// loop: start = 0, end = seq_len; while start < end: mid = start + (end - start) / 2; go right
// (start = mid + 1) when !(row[mid] >= v) (right: !(row[mid] > v)), else end = mid. The result
// `start` is written as out_dtype (int32 or int64). Comparisons are the dtype's own (floats as
// IEEE: NaN compares false, -0 = +0; half types through float32; integers exact).
enum SearchOp : std::int32_t { kSearch_searchsorted = 0, kSearch_bucketize = 1 };
enum SearchVariant : std::int32_t { kSearchBinary = 0 };
// Buffers: [0] out, [1] the sorted sequence, [2] the values.
struct SearchParams {
  std::int32_t op;       // SearchOp
  std::int32_t variant;  // SearchVariant
  std::int32_t dtype;    // the sequence's and the values' dtype
  std::int32_t out_dtype;
  std::int32_t right;
  std::int32_t ndim;
  std::int64_t numel;
  std::int64_t seq_len;
  std::int64_t sizes[kMaxDims];
  std::int64_t out_offset;
  std::int64_t out_strides[kMaxDims];
  std::int64_t values_offset;
  std::int64_t values_strides[kMaxDims];
  std::int64_t seq_offset;
  std::int64_t seq_strides[kMaxDims];
  std::int64_t seq_stride;
};

// ---- "join": cat's inputs copied into their slices of the output, in one launch ----
// Input k (of `count`) is the view at inputs[k].offset with the output's `sizes` except
// inputs[k].extent along `dim`, and its own strides; it is copied bit for bit into the
// output's positions [at, at + extent) along dim (out_offset, out_strides). The inputs and
// the output share `dtype` (the wrapper casts any other input itself). More inputs than
// kJoinMaxInputs take several launches.
enum JoinOp : std::int32_t { kJoin_cat = 0 };
enum JoinVariant : std::int32_t {
  kJoinStrided = 0,  // any strides: a thread per element, its coordinates in its input
  kJoinFlat = 1,     // ndim 2, dim 1, every stride of dim 1 equal to 1 (the wrapper folds
                     // the dims after the cat dim into it and the dims before into dim 0):
                     // each input is rows of contiguous elements, copied as bytes in the
                     // widest vector their alignment allows, blocks shared among the inputs
                     // in proportion to their sizes
};
inline constexpr int kJoinMaxInputs = 16;
struct JoinInput {
  std::int64_t offset;  // element offset in its buffer
  std::int64_t extent;  // its size along dim
  std::int64_t at;      // its first position along dim in the output
  std::int64_t strides[kMaxDims];
};
// Buffers: [0] out, [1 + k] input k.
struct JoinParams {
  std::int32_t op;       // JoinOp
  std::int32_t variant;  // JoinVariant
  std::int32_t dtype;
  std::int32_t ndim;             // >= 1
  std::int32_t dim;              // the cat dim, in [0, ndim)
  std::int32_t count;            // inputs, in [1, kJoinMaxInputs]
  std::int64_t sizes[kMaxDims];  // the output's shape
  std::int64_t out_offset;
  std::int64_t out_strides[kMaxDims];
  JoinInput inputs[kJoinMaxInputs];
};

// ---- "rotary": rotary position embedding, in place on q and k (vLLM's rotary_embedding) ----
// Token t (coordinates c over the `token_ndim` token dims of `token_sizes`, t their row-major
// flat index) reads its position p at pos_offset + Σ c_k · pos_strides[k] (int32 or int64)
// and checks it against [0, max_position): a bad one is a device fault (FaultRecord: this
// family, the op, index = p, bound = max_position, position = t) and none of the token's
// elements is touched. Each of the token's q_heads q heads (head h from element q_offset +
// Σ c_k · q_token_strides[k] + h · q_head_stride, its dim running with q_dim_stride) and
// k_heads k heads (only with has_k) has rotary_dim / 2 pairs: pair i is the elements
// (i, i + rotary_dim / 2) of the head (kRotaryHalf, NeoX/Llama) or (2i, 2i + 1)
// (kRotaryInterleaved, GPT-J). With c = cache[p][i] and s = cache[p][rotary_dim / 2 + i]
// (element cache_offset + p · cache_row_stride + column · cache_col_stride):
// x1' = x1·c − x2·s, x2' = x2·c + x1·s, in float32 (float64 for float64 q and k; the host in
// float64), rounded once to `dtype`. Elements from rotary_dim on are not touched. Each thread
// owns its pair, so the update in place is safe; q and k must not share an element (the
// wrapper checks). The cache holds `cache_dtype`: float32 or `dtype`.
// Buffers: [0] q, [1] k (empty memory without has_k), [2] positions, [3] cos_sin_cache.
enum RotaryOp : std::int32_t { kRotary_rotary_embedding = 0 };
enum RotaryVariant : std::int32_t { kRotaryPairs = 0 };
enum RotaryStyle : std::int32_t { kRotaryHalf = 0, kRotaryInterleaved = 1 };
struct RotaryParams {
  std::int32_t op;       // RotaryOp
  std::int32_t variant;  // RotaryVariant
  std::int32_t dtype;    // q's and k's: float16, bfloat16, float32, float64
  std::int32_t cache_dtype;
  std::int32_t pos_dtype;  // int32 or int64
  std::int32_t style;      // RotaryStyle
  std::int32_t token_ndim;
  std::int32_t has_k;
  std::int64_t tokens;  // the product of token_sizes
  std::int64_t q_heads;
  std::int64_t k_heads;     // 0 without has_k
  std::int64_t rotary_dim;  // even, >= 2
  std::int64_t max_position;
  std::int64_t token_sizes[kMaxDims];
  std::int64_t q_offset, q_head_stride, q_dim_stride;
  std::int64_t q_token_strides[kMaxDims];
  std::int64_t k_offset, k_head_stride, k_dim_stride;
  std::int64_t k_token_strides[kMaxDims];
  std::int64_t pos_offset;
  std::int64_t pos_strides[kMaxDims];
  std::int64_t cache_offset, cache_row_stride, cache_col_stride;
};

// ---- "attention": fused scaled-dot-product attention (online softmax, no L x S matrix) ----
// Buffers: [0] out, [1] q, [2] k, [3] v, [4] workspace (float32; split_kv only, else empty).
// Every tensor is read as [batch, heads, rows, dim] through its offset and four strides (the
// [B, S, H, D] layout read in place). Query head h reads key/value head h / (q_heads /
// kv_heads) (grouped-query attention). out[b, h, i] = sum_j p_j v[b, h', j] with
// p = softmax_j(scale * q[b, h, i] . k[b, h', j]) over the keys j that take part: all of them,
// or with `causal` those with j <= i + causal_shift (top-left: 0; bottom-right: S - L). A row
// in which no key takes part is zeros (PyTorch's math path >= 2.5). Scores, the softmax and
// the weighted sum accumulate in float32, rounded once (the host: float64).
enum AttentionOp : std::int32_t { kAttention_sdpa = 0 };
enum AttentionVariant : std::int32_t {
  kAttentionFlash = 0,     // tiles of block_rows query rows against tiles of block_keys keys
  kAttentionFlashMma = 1,  // the same on the matrix units (CUDA mma.sync, float16/bfloat16;
                           // head_dim <= kAttentionMmaMaxDim, value_dim == head_dim)
  kAttentionSplitKv = 2,   // decode: the keys in `splits` chunks, partial results in the
                           // workspace, combined by a second pass
  kAttentionCudnn = 3,     // CUDA: cuDNN's fused flash attention (the library loaded at run
                           // time); float16/bfloat16, head dims multiples of 8 up to
                           // kAttentionCudnnMaxDim, 16-byte rows, causal top-left or
                           // bottom-right with q_len <= kv_len, kv_len >= 1
};
inline constexpr int kAttentionCudnnMaxDim = 128;
// Whether a [batch, heads, rows, dim] view of `element_bytes`-byte values has contiguous rows
// starting on 16 bytes: dim stride 1, the offset and the other strides whole 16-byte steps
// (what 16-byte loads, asynchronous copies and cuDNN's aligned tensors need).
constexpr bool attention_rows_of_16_bytes(std::int64_t offset, const std::int64_t* strides,
                                          std::int64_t element_bytes) {
  const std::int64_t per16 = 16 / element_bytes;
  return strides[3] == 1 && offset % per16 == 0 && strides[0] % per16 == 0 &&
         strides[1] % per16 == 0 && strides[2] % per16 == 0;
}
inline constexpr int kAttentionMaxDim = 256;     // head_dim and value_dim of every variant
inline constexpr int kAttentionMmaMaxDim = 256;  // flash_mma pads head_dim to 64, 96, 128, 256
// split_kv's workspace, in float32 words, written by the first pass and read by the second:
// record r = ((split x batch + b) x q_heads + h) x q_len + i (split slowest, row fastest) of
// value_dim + 2 words starts at word r x (value_dim + 2) and holds, over the keys j of that
// split's chunk [split x split_len, min(kv_len, (split + 1) x split_len)) that row i of query
// head h takes part with (the causal bound applied), with s_j = scale x q . k_j:
//   [0, value_dim)  o[e] = sum_j exp(s_j - m) v_j[e], not divided by the sum;
//   [value_dim]     m = max_j s_j, natural-log units (a kernel scoring in base 2 stores
//                   m2 x ln 2), -inf when no key of the chunk takes part;
//   [value_dim + 1] l = sum_j exp(s_j - m), 0 when no key takes part (then o is 0).
// The second pass: M = max over splits of m, out[e] = sum o[e] exp(m - M) / sum l exp(m - M),
// zeros where every split's m is -inf.
constexpr std::int64_t attention_workspace_words(std::int64_t splits, std::int64_t batch,
                                                 std::int64_t q_heads, std::int64_t q_len,
                                                 std::int64_t value_dim) {
  return splits * batch * q_heads * q_len * (value_dim + 2);
}
struct AttentionParams {
  std::int32_t op;          // AttentionOp
  std::int32_t variant;     // AttentionVariant
  std::int32_t dtype;       // q, k, v and out: float16, bfloat16, float32
  std::int32_t causal;      // 0 or 1
  std::int32_t block_rows;  // query rows of a block (the plan's tile)
  std::int32_t block_keys;  // keys of a step
  std::int32_t splits;      // split_kv: key chunks (>= 1); other variants: 1
  std::int32_t key_stages;  // flash_mma: K/V tiles in flight (2: the next loads under the
                            // math; 1: a device without room for two); other variants: 1
  std::int64_t batch;       // the output's leading dims before the heads, flattened
  std::int64_t q_heads, kv_heads;
  std::int64_t q_len, kv_len, head_dim, value_dim;
  std::int64_t causal_shift;  // key j takes part in row i where j <= i + causal_shift
  std::int64_t split_len;     // split_kv: keys a chunk (the last may hold fewer)
  double scale;
  std::int64_t q_offset, q_strides[4];  // [batch, head, row, dim]
  std::int64_t k_offset, k_strides[4];
  std::int64_t v_offset, v_strides[4];
  std::int64_t out_offset, out_strides[4];
};

// ---- "grouped_matmul": one product per group of rows, all groups in one launch ----
// out[r, n] = Σ_k a[r, k] · b[e][n, k] for every row r of group e, offsets[e] <= r <
// offsets[e + 1] (MoE experts: a's rows sorted by expert, b the experts' Linear weights
// [E, N, K]; an [E, K, N] b is the same block with its n and k strides swapped). The offsets
// are read on the device ([groups + 1] int32 or int64, no host sync of the counts) and must
// partition the rows: offsets[0] = 0, never decreasing, offsets[groups] = rows. Anything else
// is a device fault (kFaultIndexOutOfRange: index = the offending value, bound = rows,
// position = its entry); that launch writes nothing and reads nothing out of range.
// Accumulation in float32 for float16/bfloat16/float32 (the host reference in float64),
// rounded once to out_dtype (= a's dtype).
// Buffers: [0] out, [1] a, [2] b, [3] offsets.
enum GroupedMatmulOp : std::int32_t { kGroupedMatmul_grouped_matmul = 0 };
enum GroupedMatmulVariant : std::int32_t {
  kGroupedMatmulTiled = 0,  // shared-memory tiles, FMA (CUDA/HIP, Vulkan), host loops
  kGroupedMatmulMma = 1,    // CUDA sm_80+: mma.sync bf16/f16 tiles fed by cp.async stages
  kGroupedMatmulBlas = 2,   // CUDA with cuBLASLt: the offsets read back (one stream sync), then
                            // one vendor GEMM a non-empty group; bad offsets take the tiled
                            // kernel's fault path
};
// The mma variant's tile (kernels/gpu/grouped_matmul_mma.cuh): 128 x 256 output tiles (the
// tile vLLM's tuned fused_moe takes on the H200 at Mixtral's shapes), k steps of 32, 16-byte
// (8-element) cp.async chunks.
inline constexpr int kGroupedMmaTileM = 128;
inline constexpr int kGroupedMmaTileN = 256;
inline constexpr int kGroupedMmaTileK = 32;
inline constexpr int kGroupedMmaChunk = 8;
// The bytes of shared memory the mma variant takes for `stages` k steps in flight.
constexpr std::int64_t grouped_mma_shared_bytes(int stages) {
  return std::int64_t(stages) * (kGroupedMmaTileM + kGroupedMmaTileN) * kGroupedMmaTileK * 2;
}
struct GroupedMatmulParams {
  std::int32_t op;       // GroupedMatmulOp
  std::int32_t variant;  // GroupedMatmulVariant
  std::int32_t dtype;    // a's and b's: float16, bfloat16, float32
  std::int32_t out_dtype;
  std::int32_t offsets_dtype;  // int32 or int64
  std::int32_t num_stages;     // the mma variant's k steps in flight (3 or 4); 0 otherwise
  std::int64_t groups;         // E
  std::int64_t rows;           // R
  std::int64_t n, k;
  std::int64_t a_offset, a_row_stride, a_col_stride;
  std::int64_t b_offset, b_group_stride, b_n_stride, b_k_stride;
  std::int64_t out_offset, out_row_stride, out_col_stride;
  std::int64_t offsets_offset, offsets_stride;
};

// ---- "timestamp" (diagnostic): the device clock into a uint64 slot ----
// Buffers: [0] a uint64 array. Written once every command issued before it has finished;
// ticks, converted by DeviceProperties::extra["timestamp_period_ns"]. Vulkan only.
struct TimestampParams {
  std::int64_t slot;
};

// ---- "copy_probe" (diagnostic): the plain copy shader benchmarks compare kernels with ----
// Buffers: [0] destination, [1] source; copies `words` 16-byte words. Vulkan only.
struct CopyProbeParams {
  std::int64_t words;
};

}  // namespace nbx::abi
