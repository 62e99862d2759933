// GpuDevice<Rt>'s copies from another device of the same runtime (Tensor::to(cuda:1) from
// cuda:0). The runtime's peer copy where it says the two devices can access each other
// (NVLink or PCIe peer-to-peer, access enabled once per pair); otherwise the bytes go through
// this device's two 8 MiB pinned slots, out on the source's stream and in on this one, with
// no host wait between chunks. Events order the copy after both devices' earlier work, and
// the source's later work (a reuse of the block its allocator gets back) after the copy.
// Included by gpu_device_impl.hpp.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>

#include "backends/gpu_runtime/gpu_device.hpp"
#include "core/errors.hpp"

namespace nbx::gpu_runtime {

// NBX_PEER_COPY=staged takes the staged route where the peer one is there (a test of the
// fallback on a machine whose GPUs are peers, and a comparison of the two).
inline bool peer_copy_forced_staged() {
  const char* v = std::getenv("NBX_PEER_COPY");
  if (!v || !*v || std::string(v) == "auto") return false;
  if (std::string(v) == "staged") return true;
  throw InvalidArgument(
      "NBX_PEER_COPY",
      "NBX_PEER_COPY must be auto (the default) or staged (got '" + std::string(v) + "').");
}

template <class Rt>
PeerRoute GpuDevice<Rt>::peer_route_impl(const BackendDevice& src, std::string* why) const {
  const auto* peer = dynamic_cast<const GpuDevice*>(&src);
  if (!peer) {
    if (why) *why = src.display_name() + " is not a device of this runtime";
    return PeerRoute::kNone;
  }
  // Two devices of one GPU (the GPU tests open device 0 several times): the runtime has no
  // peer access from a GPU to itself, and the staged route runs between their two streams.
  if (peer->index_ == index_) {
    if (why) *why = "two devices of one GPU, each with its own stream";
    return PeerRoute::kStaged;
  }
  int can = 0;
  check(Rt::can_access_peer(&can, index_, peer->index_), "DeviceCanAccessPeer");
  const bool staged = peer_copy_forced_staged();
  if (why)
    *why = std::string(Rt::kPrefix) + "DeviceCanAccessPeer(" + std::to_string(index_) + ", " +
           std::to_string(peer->index_) + ") = " + std::to_string(can) +
           (staged && can ? "; NBX_PEER_COPY=staged" : "");
  return can && !staged ? PeerRoute::kPeer : PeerRoute::kStaged;
}

template <class Rt>
void GpuDevice<Rt>::wait_for(GpuDevice& other) {
  other.make_current();
  other.flush_batch();
  check(Rt::event_record(other.handoff_, other.stream_), "EventRecord(handoff)");
  make_current();
  // A stream may wait on another device's event; the wait takes the event as recorded now.
  check(Rt::stream_wait_event(stream_, other.handoff_), "StreamWaitEvent(handoff)");
}

template <class Rt>
void GpuDevice<Rt>::copy_from_peer_impl(DeviceMemory dst, std::size_t dst_offset,
                                        BackendDevice& src, DeviceMemory src_memory,
                                        std::size_t src_offset, std::size_t bytes) {
  auto& peer = dynamic_cast<GpuDevice&>(src);
  const PeerRoute route = peer_route_impl(peer, nullptr);
  wait_for(peer);  // the source's writes first; this device current, its batch flushed
  flush_batch();
  auto* out = static_cast<char*>(dst.handle) + dst_offset;
  const auto* in = static_cast<const char*>(src_memory.handle) + src_offset;
  if (route == PeerRoute::kPeer) {
    if (peer.index_ >= 64 || !(peers_enabled_ & (std::uint64_t(1) << peer.index_))) {
      check(Rt::enable_peer_access(peer.index_), "DeviceEnablePeerAccess");
      if (peer.index_ < 64) peers_enabled_ |= std::uint64_t(1) << peer.index_;
    }
    check(Rt::copy_peer_async(out, index_, in, peer.index_, bytes, stream_), "MemcpyPeerAsync");
  } else {
    for (std::size_t done = 0; done < bytes;) {
      const std::size_t n = std::min(kStagingBytes, bytes - done);
      const int s = next_slot_;
      next_slot_ = (next_slot_ + 1) % kStagingSlots;
      // The slot's last reader (an earlier copy in, on this stream) before the source writes it.
      peer.make_current();
      check(Rt::stream_wait_event(peer.stream_, staging_free_[s]), "StreamWaitEvent(staging)");
      check(Rt::copy_to_host_async(staging_[s], in + done, n, peer.stream_),
            "MemcpyAsync(peer to pinned)");
      wait_for(peer);
      check(Rt::copy_to_device_async(out + done, staging_[s], n, stream_),
            "MemcpyAsync(pinned to device)");
      check(Rt::event_record(staging_free_[s], stream_), "EventRecord");
      done += n;
    }
  }
  // The source's next work waits for the copy: its allocator may hand the block out again.
  peer.wait_for(*this);
  make_current();
}

}  // namespace nbx::gpu_runtime
