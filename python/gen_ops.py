#!/usr/bin/env python3
"""Writes the pybind11 bindings of every public op (nbx.ops) from the public headers.

The ops are read from their declarations in core/ops/*.hpp (the headers nbx/nbx.hpp
includes) and from core/ops/elementwise_inplace.inc, which declares the in-place and out=
forms through macros. A function enters nbx.ops when it lives in namespace nbx::ops, returns
a tensor, tensors, a result struct, bool or nothing, and takes only parameter types the
module converts (BINDABLE below); everything else (planners, names, enums) stays in C++.
Overloads keep the header's order, which is the order pybind11 tries them in. The comment
above a declaration becomes its docstring.

    gen_ops.py OUT_0.cpp [OUT_1.cpp …] HEADER... INPLACE.inc

Functions are dealt round-robin into the OUT files (compiled apart); OUT_0 defines
nbx::ops::bind_generated_ops, which binds them all.
"""
import re
import sys

RETURNS = {
    "Tensor", "bool", "void", "TensorList", "std::vector<Tensor>", "ValuesAndIndices", "MinMax",
    "StatisticAndMean", "MoeRouting", "MoePermutation", "RotaryResult", "UniqueResult",
}
ENUMS = {"GeluApproximation", "CausalAlignment", "GroupedWeights", "MoeActivation", "RotaryStyle",
         "PadMode"}
BINDABLE = {
    "const Tensor&", "Tensor", "const TensorOrScalar&", "Scalar", "DType", "std::optional<DType>",
    "const Device&", "std::optional<Device>", "bool", "double", "std::int64_t",
    "std::optional<double>", "std::optional<std::int64_t>", "std::string_view",
    "std::optional<std::string_view>", "const std::optional<Tensor>&",
    "const std::optional<TensorOrScalar>&", "const Shape&", "const Strides&", "const DimList&",
    "const IntList&", "const TensorList&", "const std::vector<Tensor>&",
} | ENUMS


def strip_preprocessor(text):
    """The text without preprocessor lines (a #define's continued lines included)."""
    out, continued = [], False
    for line in text.split("\n"):
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.rstrip().endswith("\\")
        if not directive:
            out.append(line)
    return "\n".join(out)


def balanced(text, start):
    """Index just past the bracket that closes the one at text[start]."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = []
    for i in range(start, len(text)):
        c = text[i]
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
    raise ValueError("unbalanced brackets")


def split_top(text, sep):
    """Splits at `sep` outside (), {}, [] and <>."""
    parts, depth, cur = [], 0, ""
    for c in text:
        if c in "({[<":
            depth += 1
        elif c in ")}]>":
            depth -= 1
        if c == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur)
    return parts


def expand_inplace(text):
    """The declarations core/ops/inplace.hpp makes of each NBX_INPLACE/NBX_OUT_ONLY line."""
    out = []
    text = re.sub(r"//[^\n]*", "", text)
    for m in re.finditer(r"\b(NBX_INPLACE|NBX_OUT_ONLY)\s*\(", text):
        if text[:m.start()].rstrip().endswith("define"):
            continue
        args = split_top(text[m.end():balanced(text, m.end() - 1) - 1], ",")
        op, params = args[0].strip(), args[1].strip()[1:-1]
        params = re.sub(r"NBX_DEFAULT\((.*?)\)(?=\s*[,)]|\s*$)", r"= \1", params)
        extra = (", " + params) if params.strip() else ""
        comment = f"// The {'out= form' if m.group(1) == 'NBX_OUT_ONLY' else 'in-place form'} of {op} (core/ops/inplace.hpp).\n"
        if m.group(1) == "NBX_INPLACE":
            out.append(f"{comment}Tensor {op}_(const Tensor& self{extra});")
        out.append(f"// The out= form of {op} (core/ops/inplace.hpp).\n"
                   f"Tensor {op}_out(const Tensor& out, const Tensor& self{extra});")
    return "namespace nbx::ops {\n" + "\n".join(out) + "\n}\n"


def declarations(text):
    """(namespace, statement, comment) for each top-level statement of nbx::ops."""
    text = strip_preprocessor(text)
    out = []
    namespace, i, comment = None, 0, []
    while i < len(text):
        if text.startswith("//", i):
            end = text.find("\n", i)
            line = text[i + 2:end].strip()
            if not line.startswith("----"):  # a section heading, not the next op's doc
                comment.append(line)
            i = end + 1
            continue
        m = re.compile(r"namespace\s+([\w:]+)\s*\{").match(text, i)
        if m:
            namespace, i, comment = m.group(1), m.end(), []
            continue
        if text[i] == "}":  # the namespace's end
            namespace, i, comment = None, text.find("\n", i) + 1, []
            continue
        if text[i].isspace():
            if text[i] == "\n" and text[i - 1:i] == "\n":
                comment = []  # a blank line ends a comment block
            i += 1
            continue
        # One statement: up to ';' at depth 0, skipping bodies of structs and enums.
        j, depth = i, 0
        while j < len(text):
            c = text[j]
            if text.startswith("//", j):
                j = text.find("\n", j)
                continue
            if c in "({":
                depth += 1
            elif c in ")}":
                depth -= 1
            elif c == ";" and depth == 0:
                break
            j += 1
        out.append((namespace, " ".join(text[i:j].split()), " ".join(comment)))
        comment, i = [], j + 1
    return out


DECL = re.compile(r"^(?P<ret>[\w:<>, ]+?)\s*\b(?P<name>\w+)\s*\((?P<params>.*)\)$")


def parse_param(p):
    p = p.strip()
    default = None
    parts = split_top(p, "=")
    if len(parts) == 2:
        p, default = parts[0].strip(), parts[1].strip()
    m = re.match(r"^(?P<type>.*?)\s*\b(?P<name>\w+)$", p)
    return " ".join(m.group("type").replace("&", "& ").split()).replace(" &", "&"), m.group("name"), default


def decayed(t):
    return t.replace("const ", "").replace("&", "").strip()


def default_expr(t, d):
    if d.startswith("{"):
        return f"{decayed(t)}{d}"
    return f"{decayed(t)}({d})"


def main():
    args = sys.argv[1:]
    out_paths = [a for a in args if a.endswith(".cpp")]
    inputs = [a for a in args if not a.endswith(".cpp")]
    functions = []  # (name, ret, params, comment)
    skipped = []
    for path in inputs:
        text = open(path).read()
        if path.endswith(".inc"):
            text = expand_inplace(text)
        for namespace, stmt, comment in declarations(text):
            if namespace != "nbx::ops" or stmt.startswith(("struct ", "enum ", "using ", "class ",
                                                           "inline constexpr", "template")):
                continue
            m = DECL.match(stmt)
            if not m:
                continue
            ret = m.group("ret").strip()
            params = [parse_param(p) for p in split_top(m.group("params"), ",")]
            if ret not in RETURNS or any(t not in BINDABLE for t, _, _ in params):
                skipped.append(m.group("name"))
                continue
            functions.append((m.group("name"), ret, params, comment))
    # Parts compiled apart: one file of ~500 pybind11 defs takes minutes and gigabytes.
    # Overloads stay together and in order: pybind11 tries them in the order they are added.
    groups = {}
    for f in functions:
        groups.setdefault(f[0], []).append(f)
    parts = [[f for g in list(groups.values())[i::len(out_paths)] for f in g]
             for i in range(len(out_paths))]
    for k, (path, part) in enumerate(zip(out_paths, parts)):
        lines = [
            "// Generated by python/gen_ops.py from the public op headers; do not edit.",
            f"// Part {k} of {len(out_paths)}: {len(part)} of {len(functions)} functions."
            + (f" Not bound (not ops): {', '.join(sorted(set(skipped)))}." if k == 0 else ""),
            '#include "nbx/nbx.hpp"',
            '#include "python/py_casters.hpp"',
            "",
            "namespace nbx::ops {",
            "",
        ]
        if k == 0:
            lines += [f"void bind_generated_ops_{j}(pybind11::module_& m);" for j in range(1, len(parts))]
            lines += ["", "void bind_generated_ops(pybind11::module_& m) {"]
            lines += [f"  bind_generated_ops_{j}(m);" for j in range(1, len(parts))]
        else:
            lines += [f"void bind_generated_ops_{k}(pybind11::module_& m) {{"]
        lines.append("  namespace py = pybind11;")
        for name, ret, params, comment in part:
            sig = f"static_cast<{ret} (*)({', '.join(t for t, _, _ in params)})>(&nbx::ops::{name})"
            args = "".join(f', py::arg("{n}")' + (f" = {default_expr(t, d)}" if d is not None else "")
                           for t, n, d in params)
            doc = comment.replace("\\", "\\\\").replace('"', '\\"')
            lines.append(f'  m.def("{name}", {sig}{args}, "{doc}");')
        lines += ["}", "", "}  // namespace nbx::ops", ""]
        with open(path, "w") as f:
            f.write("\n".join(lines))


if __name__ == "__main__":
    main()
