#version 450
// VulkanDevice::copy_on_device as a shader: vkCmdCopyBuffer reached 844 GB/s on the H200
// where a 16-byte-per-invocation shader reaches ~4.1 TB/s (docs/performance.md, Vulkan).
//
// WORD (specialization constant) is 16, 4 or 1 bytes: the widest unit whose alignment the
// source and destination share (their byte offsets agree modulo WORD). The backend splits
// the copy into a head of bytes up to the destination's first whole word, whole words, and
// a tail of bytes; one grid covers all three (the words first: they are the bulk).
// Binding 1 is the destination allocation, binding 2 the source allocation.
#extension GL_EXT_shader_8bit_storage : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint WORD = 16u;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 words;  // x count, y first destination word, z first source word, w grid invocations
  uvec4 bytes;  // x head count, y tail count, z head destination byte, w head source byte
  uvec4 tail;   // x tail destination byte, y tail source byte
} P;

layout(set = 0, binding = 1) writeonly buffer D128 { uvec4 v[]; } d128;
layout(set = 0, binding = 1) writeonly buffer D32 { uint v[]; } d32;
layout(set = 0, binding = 1) writeonly buffer D8 { uint8_t v[]; } d8;
layout(set = 0, binding = 2) readonly buffer S128 { uvec4 v[]; } s128;
layout(set = 0, binding = 2) readonly buffer S32 { uint v[]; } s32;
layout(set = 0, binding = 2) readonly buffer S8 { uint8_t v[]; } s8;

void main() {
  const uint n = P.words.x, head = P.bytes.x, items = n + head + P.bytes.y;
  for (uint i = gl_GlobalInvocationID.x; i < items; i += P.words.w) {
    if (i < n) {
      if (WORD == 16u) d128.v[P.words.y + i] = s128.v[P.words.z + i];
      else if (WORD == 4u) d32.v[P.words.y + i] = s32.v[P.words.z + i];
      else d8.v[P.words.y + i] = s8.v[P.words.z + i];
    } else if (i < n + head) {
      d8.v[P.bytes.z + (i - n)] = s8.v[P.bytes.w + (i - n)];
    } else {
      d8.v[P.tail.x + (i - n - head)] = s8.v[P.tail.y + (i - n - head)];
    }
  }
}
