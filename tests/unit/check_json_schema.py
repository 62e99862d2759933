#!/usr/bin/env python3
"""Runs `nbx ARGS…` and checks that its standard output is one JSON object whose "schema" is
SCHEMA (README, "JSON output"): check_json_schema.py NBX SCHEMA ARGS…"""
import json
import subprocess
import sys

nbx, schema, args = sys.argv[1], sys.argv[2], sys.argv[3:]
run = subprocess.run([nbx] + args, capture_output=True, text=True, check=False)
if run.returncode not in (0, 77):
    sys.exit(f"nbx {' '.join(args)} exited {run.returncode}: {run.stderr.strip()}")
doc = json.loads(run.stdout)
if not isinstance(doc, dict) or doc.get("schema") != schema:
    got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
    sys.exit(f"nbx {' '.join(args)}: schema {got!r}, expected {schema!r}")
print(f"nbx {' '.join(args)}: {schema}")
