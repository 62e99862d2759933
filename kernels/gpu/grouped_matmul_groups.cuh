// The "grouped_matmul" family's tile schedule, shared by its tiled and mma kernels (CUDA and
// HIP): which group and rows an m-tile slot computes, read from the device-resident offsets,
// with the offsets' check and fault record on the way.
//
// The grid holds ceil(rows / tile_m) + groups m-tile slots (an upper bound: each group adds at
// most one partial tile), so no count reaches the host. Slot s is the s-th tile of the groups'
// tiles in group order (group e has ceil(count_e / tile_m)); slots past the last tile are idle.
// Each block's first warp reads all groups + 1 offsets a warp-width at a time, scans the tile
// counts, and checks every entry (offsets[0] = 0, never decreasing, offsets[groups] = rows):
// every block checks all of them, so a bad entry is seen whichever blocks run, and the lowest
// bad entry is the one recorded (the first record on the device wins; all report the same).
#pragma once

#include "kernels/gpu/elementwise_values.cuh"

namespace nbx::gpu {

struct GroupTile {
  int bad;      // the offsets failed the check: the block returns, writing nothing
  int group;    // -1: an idle slot
  i64 row0;     // first row of the tile
  i64 row_end;  // one past the group's last row
};

// Warp 0 fills `*tile`; every thread of the block calls it and sees the result after it returns.
template <typename Index>
__device__ void find_group_tile(const abi::GroupedMatmulParams& p, const Index* offsets, i64 slot,
                                int tile_m, GroupTile* tile, abi::FaultRecord* fault) {
  if (threadIdx.x < kWarpSize) {
    const int lane = static_cast<int>(threadIdx.x);
    i64 carry = 0;      // tiles of the groups before this chunk
    i64 prev_last = 0;  // the entry before this chunk's first (0 before entry 0)
    if (lane == 0) {
      tile->bad = 0;
      tile->group = -1;
    }
    warp_sync();
    for (i64 base = 0; base <= p.groups; base += kWarpSize) {
      const i64 i = base + lane;
      const bool has = i <= p.groups;
      const i64 v = has ? i64(offsets[p.offsets_offset + i * p.offsets_stride]) : 0;
      i64 prev = warp_shuffle(v, lane > 0 ? lane - 1 : 0);
      if (lane == 0) prev = prev_last;
      const bool bad =
          has && (v < prev || v > p.rows || (i == 0 && v != 0) || (i == p.groups && v != p.rows));
      const LaneMask any_bad = warp_ballot(bad);
      if (any_bad != 0) {
        if (lane == first_lane(any_bad)) {
          tile->bad = 1;
          if (atomic_cas(&fault->code, abi::kFaultNone, abi::kFaultIndexOutOfRange) ==
              abi::kFaultNone) {
            fault->op = abi::fault_op(abi::kFamily_grouped_matmul, p.op);
            fault->index = v;
            fault->bound = p.rows;
            fault->position = i;
            memory_fence();
          }
        }
        break;  // warp-uniform
      }
      // Entry i closes group i - 1 = [prev, v).
      const i64 tiles = has && i >= 1 ? (v - prev + tile_m - 1) / tile_m : 0;
      i64 incl = tiles;
      for (int d = 1; d < kWarpSize; d *= 2) {
        const i64 up = warp_shuffle(incl, lane >= d ? lane - d : lane);
        if (lane >= d) incl += up;
      }
      const i64 start = carry + incl - tiles;
      if (tiles > 0 && slot >= start && slot < start + tiles) {
        tile->group = static_cast<int>(i - 1);
        tile->row0 = prev + (slot - start) * tile_m;
        tile->row_end = v;
      }
      carry += warp_shuffle(incl, kWarpSize - 1);
      prev_last = warp_shuffle(v, kWarpSize - 1);
    }
  }
  __syncthreads();
}

// The m-tile slots of the grid: an upper bound on the groups' tiles.
inline i64 grouped_m_slots(const abi::GroupedMatmulParams& p, int tile_m) {
  return (p.rows + tile_m - 1) / tile_m + p.groups;
}

// Block `pid` → (m slot, n tile), m slots fastest within bands of kGroupedBand: a band's blocks
// run together, so one group's weight tile is read by all its row tiles while it is in L2, and
// the band's rows of a stay there across n tiles (the order Triton's grouped GEMMs use).
inline constexpr i64 kGroupedBand = 16;
NBX_GPU_INLINE void grouped_tile_of(i64 pid, i64 m_slots, i64 n_tiles, i64& m_slot, i64& n_tile) {
  const i64 per_band = kGroupedBand * n_tiles;
  const i64 band = pid / per_band;
  const i64 first = band * kGroupedBand;
  const i64 height = m_slots - first < kGroupedBand ? m_slots - first : kGroupedBand;
  const i64 in_band = pid % per_band;
  m_slot = first + in_band % height;
  n_tile = in_band / height;
}

}  // namespace nbx::gpu
