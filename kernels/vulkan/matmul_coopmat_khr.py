#!/usr/bin/env python3
"""Rewrites the GL_NV_cooperative_matrix build of matmul_coopmat.comp as SPV_KHR_cooperative_matrix.

usage: matmul_coopmat_khr.py SPIRV_VAL IN_NV.spv OUT_KHR.spv

Debian's glslc (glslang 11/12) has no GL_KHR_cooperative_matrix and its spirv-val (SPIRV-Tools
2023.1) does not know the KHR instructions, so the KHR module is made from the NV one, which
spirv-val checks here first. The two extensions differ only in these instructions:

  capability CooperativeMatrixNV 5357        -> CooperativeMatrixKHR 6022
  OpTypeCooperativeMatrixNV 5358 (T, scope, rows, cols)
                                             -> OpTypeCooperativeMatrixKHR 4456 (..., Use)
  OpCooperativeMatrixLoadNV 5359 (ptr, stride, column-major bool, mem)
                                             -> OpCooperativeMatrixLoadKHR 4457 (ptr, layout, stride, mem)
  OpCooperativeMatrixStoreNV 5360 (ptr, obj, stride, column-major bool, mem)
                                             -> OpCooperativeMatrixStoreKHR 4458 (ptr, obj, layout, stride, mem)
  OpCooperativeMatrixMulAddNV 5361           -> OpCooperativeMatrixMulAddKHR 4459 (float: no operands)
  OpCooperativeMatrixLengthNV 5362           -> OpCooperativeMatrixLengthKHR 4460

A KHR type carries its Use (MatrixA 0, MatrixB 1, Accumulator 2), read off the multiply-adds:
every NV type must be exactly one of A, B, or accumulator (C and result), else this fails.
Layout constants are RowMajor 0 / ColumnMajor 1 (uint constants added for Use and layout).
"""
import struct
import subprocess
import sys

OP_EXTENSION, OP_CAPABILITY, OP_TYPE_INT = 10, 17, 21
OP_CONSTANT_TRUE, OP_CONSTANT_FALSE, OP_CONSTANT = 41, 42, 43
NV_CAP, KHR_CAP = 5357, 6022
NV_TYPE, NV_LOAD, NV_STORE, NV_MULADD, NV_LENGTH = 5358, 5359, 5360, 5361, 5362
KHR_TYPE, KHR_LOAD, KHR_STORE, KHR_MULADD, KHR_LENGTH = 4456, 4457, 4458, 4459, 4460
USE_A, USE_B, USE_ACC = 0, 1, 2
# Instructions of the form (result type, result, ...) whose values can reach a multiply-add.
TYPED = {1, 44, 57, 61, 62, 80, 81, 82, 83, 245, NV_LOAD, NV_MULADD}


def fail(msg):
    sys.stderr.write(f"matmul_coopmat_khr.py: {msg}\n")
    sys.exit(1)


def encode_string(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 4)
    return list(struct.unpack(f"<{len(b) // 4}I", b))


def decode_string(words):
    b = struct.pack(f"<{len(words)}I", *words)
    return b[: b.index(b"\0")].decode()


def instructions(words):
    i = 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            fail(f"malformed instruction at word {i}")
        yield op, words[i : i + count]
        i += count


def main():
    spirv_val, src, dst = sys.argv[1:4]
    res = subprocess.run([spirv_val, "--target-env", "vulkan1.2", src], capture_output=True, text=True)
    if res.returncode != 0:
        fail(f"spirv-val rejected {src}:\n{res.stdout}{res.stderr}")
    data = open(src, "rb").read()
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    if words[0] != 0x07230203:
        fail(f"{src} is not SPIR-V")
    insts = list(instructions(words))

    type_of, bools, uint_type, nv_types = {}, {}, None, []
    for op, w in insts:
        if op in TYPED:
            type_of[w[2]] = w[1]
        if op in (OP_CONSTANT_TRUE, OP_CONSTANT_FALSE):
            bools[w[2]] = op == OP_CONSTANT_TRUE
        if op == OP_TYPE_INT and w[2] == 32 and w[3] == 0:
            uint_type = w[1]
        if op == NV_TYPE:
            nv_types.append(w[1])
    if uint_type is None or not nv_types:
        fail("no 32-bit uint type or no cooperative-matrix type in the NV module")

    use = {}
    def assign(type_id, role):
        if use.setdefault(type_id, role) != role:
            fail(f"type %{type_id} is used as two cooperative-matrix operands ({use[type_id]}, {role})")
    for op, w in insts:
        if op == NV_MULADD:
            for value, role in ((w[3], USE_A), (w[4], USE_B), (w[5], USE_ACC)):
                if value not in type_of:
                    fail(f"cannot tell the type of multiply-add operand %{value}")
                assign(type_of[value], role)
            assign(w[1], USE_ACC)
    for t in nv_types:
        if t not in use:
            fail(f"cooperative-matrix type %{t} takes part in no multiply-add")

    bound = words[3]
    const_ids = {v: bound + v for v in (0, 1, 2)}  # uint 0, 1, 2: Use and MemoryLayout
    def layout(bool_id):
        if bool_id not in bools:
            fail(f"the column-major operand %{bool_id} is not a constant bool")
        return const_ids[1 if bools[bool_id] else 0]

    out = words[:5]
    out[3] = bound + 3
    inserted = False
    for op, w in insts:
        if op == OP_CAPABILITY and w[1] == NV_CAP:
            out += [w[0], KHR_CAP]
        elif op == OP_EXTENSION and decode_string(w[1:]) == "SPV_NV_cooperative_matrix":
            s = encode_string("SPV_KHR_cooperative_matrix")
            out += [((1 + len(s)) << 16) | OP_EXTENSION] + s
        elif op == NV_TYPE:
            if not inserted:  # the constants precede the first type that names them
                for v, cid in const_ids.items():
                    out += [(4 << 16) | OP_CONSTANT, uint_type, cid, v]
                inserted = True
            out += [(7 << 16) | KHR_TYPE, w[1], w[2], w[3], w[4], w[5], const_ids[use[w[1]]]]
        elif op == NV_LOAD:
            out += [(len(w) << 16) | KHR_LOAD, w[1], w[2], w[3], layout(w[5]), w[4]] + w[6:]
        elif op == NV_STORE:
            out += [(len(w) << 16) | KHR_STORE, w[1], w[2], layout(w[4]), w[3]] + w[5:]
        elif op == NV_MULADD:
            out += [(len(w) << 16) | KHR_MULADD] + w[1:]
        elif op == NV_LENGTH:
            out += [(len(w) << 16) | KHR_LENGTH] + w[1:]
        else:
            out += w
    # Nothing of the NV extension may remain.
    for op, w in instructions(out):
        if NV_CAP <= op <= NV_LENGTH or (op == OP_CAPABILITY and w[1] == NV_CAP):
            fail(f"NV instruction {op} left in the output")
        if op == OP_EXTENSION and "NV_cooperative_matrix" in decode_string(w[1:]):
            fail("the NV extension is still declared")
    with open(dst, "wb") as f:
        f.write(struct.pack(f"<{len(out)}I", *out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
