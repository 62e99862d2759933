// Internal to core/families: turns a family's typed functions (over its abi:: block) into
// the byte-level entries of FamilySpec, so each <family>_family.cpp is written in terms of
// its own parameter struct.
#pragma once

#include <cstring>
#include <span>
#include <string>

#include "core/families/kernel_family.hpp"

namespace nbx::families {

template <class Params>
Params read_block(const std::byte* bytes) {
  Params p;
  std::memcpy(&p, bytes, sizeof p);
  return p;
}

template <class Params,
          void (*Validate)(const Params&, std::span<const KernelBuffer>, const LaunchCheck&)>
void validate_bytes(const std::byte* bytes, std::span<const KernelBuffer> buffers,
                    const LaunchCheck& check) {
  Validate(read_block<Params>(bytes), buffers, check);
}

template <class Params, std::int32_t Params::*Field>
std::int32_t field_of(const std::byte* bytes) {
  return read_block<Params>(bytes).*Field;
}

inline std::int32_t no_field(const std::byte*) {
  return 0;
}

template <class Params, std::int32_t Params::*Field>
void set_field(std::byte* bytes, std::int32_t value) {
  Params p = read_block<Params>(bytes);
  p.*Field = value;
  std::memcpy(bytes, &p, sizeof p);
}

inline void no_variant_field(std::byte*, std::int32_t) {}

// Every variant serves every block (families whose variants differ only in speed on any
// view, or that have one).
inline std::string serves_all(std::int32_t, const std::byte*, int) {
  return {};
}

template <class Params, std::string (*Refusal)(std::int32_t, const Params&, int)>
std::string refusal_bytes(std::int32_t variant, const std::byte* bytes, int subgroup_size) {
  return Refusal(variant, read_block<Params>(bytes), subgroup_size);
}

// The op name for a code from a list of names indexed by code.
std::string name_from_list(std::string_view family, std::span<const std::string_view> names,
                           std::int32_t code);

// Index out of range and integer division by zero, the codes every family shares.
std::string describe_common_fault(const abi::FaultRecord& record);

}  // namespace nbx::families
