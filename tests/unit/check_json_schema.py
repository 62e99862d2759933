#!/usr/bin/env python3
"""Runs `nbx ARGS…` and checks that its JSON is one object whose "schema" is SCHEMA (README,
"JSON output"): check_json_schema.py NBX SCHEMA ARGS…. The JSON is standard output, or the
file an argument `@json` stands for (a fresh temporary path: conformance and bench write
their --json to a file)."""
import json
import os
import subprocess
import sys
import tempfile

nbx, schema, args = sys.argv[1], sys.argv[2], sys.argv[3:]
with tempfile.TemporaryDirectory(prefix="nbx-json-") as tmp:
    path = os.path.join(tmp, "out.json")
    argv = [path if a == "@json" else a for a in args]
    run = subprocess.run([nbx] + argv, capture_output=True, text=True, check=False)
    if run.returncode not in (0, 77):
        sys.exit(f"nbx {' '.join(args)} exited {run.returncode}: {run.stderr.strip()}")
    if "@json" in args:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    else:
        text = run.stdout
doc = json.loads(text)
if not isinstance(doc, dict) or doc.get("schema") != schema:
    got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
    sys.exit(f"nbx {' '.join(args)}: schema {got!r}, expected {schema!r}")
print(f"nbx {' '.join(args)}: {schema}")
