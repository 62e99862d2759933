// What a device can do, as the op wrappers read it. One struct, filled from the device
// file that matches the device, cross-checked against the runtime's own answers (the
// runtime wins and the conflict is recorded), optionally restricted by an overlay.
// Every value keeps its provenance.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/dtype.hpp"

namespace nbx {

enum class Bf16Support { kNone, kEmulated, kNative };
std::string_view to_string(Bf16Support s);  // "none", "emulated", "native"
std::optional<Bf16Support> parse_bf16_support(std::string_view text);

enum class MatrixUnit { kNone, kMma, kWgmma, kMfma, kWmma, kCoopmat, kCoopmat2 };
std::string_view to_string(MatrixUnit u);  // "none", "mma", "wgmma", … as in schema.md
std::optional<MatrixUnit> parse_matrix_unit(std::string_view text);

// A value and where it came from: "device_files/nvidia/sm_90.yml:12 (fp64)",
// "runtime (cudaDeviceProp.sharedMemPerBlockOptin)", "overlay lowfp.yml:3 (fp64)",
// "default".
template <class T>
struct Capability {
  T value{};
  std::string source = "default";
};

// The device file and the runtime disagreed; the runtime's value was taken.
struct CapabilityConflict {
  std::string key;            // "fp64", "subgroup.size", …
  std::string file_value;     // as the file declared it
  std::string runtime_value;  // as the runtime reported it (and now in force)
  std::string file_source;    // file:line
  std::string runtime_source;
};

struct Capabilities {
  std::string device;       // "vulkan:0 (llvmpipe …)" or "arch nvidia/sm_70"
  std::string device_file;  // the file that matched, or "" when none (generic in use)
  std::string overlay;      // overlay file applied, "" when none
  std::string backend;      // "cuda", "hip", "vulkan", "host"; the overrides in force
  std::string match;        // how the device file was chosen, as a sentence
  bool generic = false;     // a vendor's generic file is in use, filled in from the runtime

  Capability<bool> fp64, fp16, int64, int8;
  Capability<Bf16Support> bf16;
  Capability<int> subgroup_size;                // warp / wavefront / subgroup size in use
  Capability<std::vector<int>> subgroup_sizes;  // every size the device allows
  Capability<int> max_threads_per_block;
  Capability<std::int64_t> shared_memory_per_block;        // default, bytes
  Capability<std::int64_t> shared_memory_per_block_optin;  // opt-in maximum, bytes
  Capability<std::int64_t> register_file_bytes;            // per SM / CU
  Capability<MatrixUnit> matrix_unit;
  Capability<std::vector<DType>> matrix_dtypes;  // input dtypes the matrix unit takes

  struct Attention {
    Capability<int> min_tile;
    Capability<int> block_ceiling;
  } attention;
  struct Reduce {
    Capability<int> tile_max;
  } reduce;
  struct Sort {
    // The most candidates topk's select keeps in shared memory (0: as many as shared memory
    // takes): fewer where a smaller workgroup lets the driver keep more of them resident.
    Capability<std::int64_t> select_candidates_max;
  } sort;
  struct Pipelining {
    Capability<int> max_num_stages;
  } pipelining;
  struct Memory {
    Capability<double> pool_cap_fraction;      // share of device memory the pool may hold
    Capability<int> attention_min_chunk_rows;  // math attention path: smallest row chunk
  } memory;
  struct Peak {
    Capability<double> bandwidth_gbps;           // GB/s
    std::map<DType, Capability<double>> tflops;  // dense TFLOP/s by dtype
  } peak;

  std::vector<CapabilityConflict> conflicts;
};

// Every capability by its schema key (device_files/schema.md): "fp64", "subgroup.size",
// "shared_memory.per_block", "peak.tflops.bfloat16". Enumerations are their schema
// spellings, dtype lists dtype names, ints int64.
using CapabilityValue = std::variant<bool, std::int64_t, double, std::string,
                                     std::vector<std::int64_t>, std::vector<std::string>>;
struct CapabilityRow {
  std::string key;
  CapabilityValue value;
  std::string source;
};
// All capabilities in schema order; peak.tflops.<dtype> only for dtypes with a value.
std::vector<CapabilityRow> capability_rows(const Capabilities& caps);
// One capability; nullopt for a key the schema does not have (or an absent peak.tflops.*).
std::optional<CapabilityRow> get_capability(const Capabilities& caps, std::string_view key);
// Sets one capability and its source. Throws InvalidArgument for an unknown key or a value
// of the wrong kind (the loader has checked file values already).
void set_capability(Capabilities& caps, std::string_view key, const CapabilityValue& value,
                    std::string source);
// "true", "49152", "0.9", "native", "[float16, bfloat16]".
std::string format_capability_value(const CapabilityValue& value);

}  // namespace nbx
