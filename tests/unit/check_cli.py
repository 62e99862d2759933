#!/usr/bin/env python3
"""The nbx command line's habits (issue 14), end to end: check_cli.py NBX SOURCE_ROOT GROUP.

GROUP is one of
  usage   words and values it cannot read are exit status 2 naming the word (README's CLI
          section, cli/exit_status.hpp); an unwritable --json path is refused before the run
  status  the other exit statuses: 0, 1 (a check failed), 3 (refused), 77 (absent); --list-ops
  progress  conformance and bench rewrite a status line on stderr when it is a terminal (a
          pseudo-terminal here) and print nothing extra when it is piped
  utf8    text that is not UTF-8 (a device file's arch, an overlay path, a device-files path)
          reaches --json as U+FFFD instead of aborting (issue 15, defect 4)
Every check is printed; the first one that does not hold ends the script with its reason."""
import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import time

NBX, ROOT, GROUP = sys.argv[1], sys.argv[2], sys.argv[3]
CHECKS = 0


def run(args, env=None, timeout=120):
    """nbx ARGS; args may be bytes (a path that is not UTF-8). Returns (rc, stdout, stderr)."""
    full_env = dict(os.environ, **(env or {}))
    p = subprocess.run([NBX] + args, capture_output=True, env=full_env, timeout=timeout,
                       check=False)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def expect(args, rc, *in_stderr, env=None, stdout_empty=False):
    """nbx ARGS exits `rc` and its stderr holds every one of `in_stderr`."""
    global CHECKS
    got, out, err = run(args, env)
    shown = " ".join(a if isinstance(a, str) else repr(a) for a in args)
    if got != rc:
        sys.exit(f"nbx {shown}: exit status {got}, expected {rc}\nstderr: {err.strip()}")
    for text in in_stderr:
        if text not in err:
            sys.exit(f"nbx {shown}: stderr does not name {text!r}: {err.strip()}")
    if stdout_empty and out.strip():
        sys.exit(f"nbx {shown}: printed before refusing: {out.strip()[:200]}")
    CHECKS += 1
    print(f"ok  nbx {shown}  -> {rc}")
    return out


def check_usage():
    expect(["frob"], 2, "unknown subcommand 'frob'")
    expect([], 2)
    expect(["device-files", "frob"], 2, "frob")
    expect(["caps", "--frob"], 2, "--frob")
    add = ["explain", "add", "--dtype", "float32,float32", "--shape"]
    expect(add + ["4,x"], 2, "'4,x'", "separator")  # 'x' separates dimensions, as in 4x3
    expect(add + ["4,x,5"], 2, "'4,x,5'", "empty")
    expect(add + ["3abc,5"], 2, "'3abc'")
    expect(add + ["-4,3"], 2, "-4")
    expect(add + ["4,,5"], 2, "empty")
    expect(["explain", "add", "--dtype", "float32,frob"], 2, "frob")
    # --to goes with op 'to' and a present device only.
    expect(["explain", "add", "--dtype", "float32", "--to", "host"], 2, "--to")
    expect(["explain", "to", "--dtype", "float32", "--arch", "nvidia/sm_90", "--to", "host"], 2)
    norm = ["explain", "group_norm", "--dtype", "float32", "--shape", "2,4,3"]
    for groups in ["0x2", "-2", "2.0", ""]:
        expect(norm + ["--groups", groups], 2, "--groups")
    quick = ["conformance", "--backend", "host", "--ops", "neg", "--dtypes", "float32", "--quick"]
    for shard in ["2x/3", "1/0", "4/3", "1", "/3"]:
        expect(quick + ["--shard", shard], 2, "--shard")
    for seed in ["-1", "0x10", "1e3", "18446744073709551616"]:
        expect(quick + ["--seed", seed], 2, "--seed", seed)
    expect(quick[:-3] + ["--dtypes", "frob"], 2, "--dtypes", "frob")
    expect(quick[:3] + ["--ops", "frob"], 2, "frob")
    expect(quick[:3] + ["--families", "frob"], 2, "frob")
    expect(["bench", "--suite", "frob"], 2, "frob")
    # A --json path that cannot be written is refused at once: nothing runs first.
    for bad in ["/nonexistent-nbx-dir/report.json", tempfile.gettempdir()]:
        start = time.monotonic()
        expect(quick + ["--json", bad], 2, bad, stdout_empty=True)
        expect(["bench", "--device", "host", "--quick", "--json", bad], 2, bad, stdout_empty=True)
        if time.monotonic() - start > 10:
            sys.exit(f"refusing --json {bad} took {time.monotonic() - start:.0f} s")


def check_status():
    expect(["--help"], 0)
    expect(["caps", "host"], 0)
    out = expect(["explain", "--list-ops"], 0)
    if "add" not in out.split() or "group_norm" not in out.split():
        sys.exit(f"explain --list-ops does not list add and group_norm: {out[:200]}")
    out = expect(["conformance", "--list-ops"], 0)
    if not any(line.startswith("elementwise:") for line in out.splitlines()):
        sys.exit(f"conformance --list-ops has no elementwise line: {out[:200]}")
    # Every name is one word that --ops takes back ("norm_p0 .5" was listed once).
    for line in out.splitlines():
        for op in line.split(": ", 1)[1].split(", "):
            if not op or not all(c.isalnum() or c == "_" for c in op):
                sys.exit(f"conformance --list-ops: {op!r} is not a name --ops can take")
    # 1: a check found faults.
    expect(["device-files", "check", os.path.join(ROOT, "tests/data/device_files")], 1,
           "malformed_")
    # 3: the device cannot; explain's plan is a refusal (float64 under the no-fp64 overlay).
    no_fp64 = os.path.join(ROOT, "tests/data/overlays/no_fp64.yml")
    out = expect(["explain", "add", "--dtype", "float64,float64", "--shape", "4", "--device",
                  "host", "--overlay", no_fp64], 3)
    if "refused" not in out:
        sys.exit(f"explain under no_fp64 printed no refusal: {out}")
    # 77: the device asked for is not here.
    expect(["caps", "hip:99"], 77, "hip")
    expect(["explain", "add", "--dtype", "float32", "--device", "hip:99"], 77)
    expect(["bench", "--device", "hip:99", "--quick"], 77)


def on_terminal(args):
    """nbx ARGS with stderr on a pseudo-terminal (stdout dropped). Returns (rc, stderr bytes)."""
    leader, follower = pty.openpty()
    p = subprocess.Popen([NBX] + args, stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    err = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the last holder of the follower end has exited
            break
        if not chunk:
            break
        err += chunk
    os.close(leader)
    return p.wait(timeout=120), err


def check_progress():
    """The status line: "\\r\\033[K" then the case, only for a terminal, cleared at the end."""
    global CHECKS
    clear = b"\r\033[K"
    runs = [
        (["conformance", "--backend", "host", "--ops", "neg,abs", "--dtypes", "float32", "--quick"],
         [b"op 1/2 neg", b"op 2/2 abs"]),
        # wave1: the quickest suite on the host (elementwise --quick takes minutes on 2 cores).
        (["bench", "--device", "host", "--quick", "--suite", "wave1"], [b"timing "]),
    ]
    for args, shown in runs:
        rc, err = on_terminal(args)
        if rc != 0:
            sys.exit(f"nbx {' '.join(args)} on a terminal: exit status {rc}: {err[-300:]!r}")
        for text in shown:
            if clear + b"  " not in err or text not in err:
                sys.exit(f"nbx {' '.join(args)} on a terminal: no status line {text!r}: {err!r}")
        if not err.endswith(clear):
            sys.exit(f"nbx {' '.join(args)} on a terminal: the status line is left: {err[-80:]!r}")
        CHECKS += 1
        print(f"ok  nbx {' '.join(args)}  (terminal: a status line)")
        # Piped, with --json FILE: no status line, and the report names its schema (this is
        # the bench's nbx.bench/2 check; its run is too slow to repeat in check_json_schema.py).
        with tempfile.TemporaryDirectory(prefix="nbx-progress-") as tmp:
            report = os.path.join(tmp, "report.json")
            rc, out, err_text = run(args + ["--json", report])
            if rc != 0 or "\r" in err_text or "\033" in err_text or "\r" in out:
                sys.exit(f"nbx {' '.join(args)} piped: exit status {rc}, a status line: "
                         f"{err_text!r}")
            with open(report, encoding="utf-8") as f:
                doc = json.load(f)
        schema = "nbx.bench/2" if args[0] == "bench" else "nbx.conformance/1"
        if doc.get("schema") != schema:
            sys.exit(f"nbx {' '.join(args)} --json: schema {doc.get('schema')!r}, not {schema}")
        if args[0] == "bench" and (doc.get("suite") != "wave1" or not doc.get("results")):
            sys.exit(f"nbx {' '.join(args)} --json: suite {doc.get('suite')!r}, no results?")
        CHECKS += 1
        print(f"ok  nbx {' '.join(args)} --json FILE  (piped: nothing extra; {schema})")


def check_json(args, env=None, rc=0):
    """nbx ARGS exits `rc` and prints one JSON object naming its schema; returns it."""
    global CHECKS
    got, out, err = run(args, env)
    shown = " ".join(a if isinstance(a, str) else repr(a) for a in args)
    if got != rc:
        sys.exit(f"nbx {shown}: exit status {got}, expected {rc}: {err.strip()}")
    doc = json.loads(out)
    if "schema" not in doc:
        sys.exit(f"nbx {shown}: no schema")
    CHECKS += 1
    print(f"ok  nbx {shown}  -> {doc['schema']}")
    return doc


def check_utf8():
    tmp = tempfile.mkdtemp(prefix="nbx-utf8-")
    try:
        raw = os.fsencode(tmp)
        bad = "\ufffd"
        # An overlay whose path is not UTF-8.
        overlay = raw + b"/no_fp64\xff.yml"
        shutil.copy(os.path.join(ROOT, "tests/data/overlays/no_fp64.yml"), overlay)
        doc = check_json(["caps", "host", "--overlay", overlay, "--json"])
        if bad not in json.dumps(doc["devices"][0]["overlay"], ensure_ascii=False):
            sys.exit(f"caps --overlay: the overlay is not written with U+FFFD: {doc['devices'][0]}")
        doc = check_json(["explain", "add", "--dtype", "float64,float64", "--device", "host",
                          "--overlay", overlay, "--json"], rc=3)  # refused: no fp64
        if "refusal" not in doc:
            sys.exit(f"explain --overlay <not UTF-8>: no refusal: {doc}")
        # A device file whose arch: is not UTF-8, by path.
        with open(os.path.join(ROOT, "tests/data/device_files/valid.yml"), "rb") as f:
            text = f.read().replace(b"arch: valid", b"arch: v\xffalid")
        arch_file = raw + b"/arch.yml"
        with open(arch_file, "wb") as f:
            f.write(text)
        rc, out, err = run(["caps", "--arch", arch_file, "--json"])
        if rc < 0 or rc >= 128:
            sys.exit(f"caps --arch (arch: not UTF-8) died: {rc}: {err}")
        if rc == 0 and bad not in out:
            sys.exit(f"caps --arch (arch: not UTF-8): no U+FFFD in {out[:300]}")
        print(f"ok  nbx caps --arch (arch: not UTF-8) --json  -> {rc}")
        arch_path = raw + b"/valid\xfe.yml"
        shutil.copy(arch_file, arch_path)
        for args in (["caps", "--arch", arch_path, "--json"],
                     ["explain", "add", "--dtype", "float32", "--arch", arch_path, "--json"]):
            rc, out, err = run(args)
            if rc < 0 or rc >= 128:
                sys.exit(f"nbx {args[:2]} with a path that is not UTF-8 died: {rc}: {err}")
            print(f"ok  nbx {args[0]} --arch <not UTF-8> --json  -> {rc}")
        # The device files from a folder whose path is not UTF-8.
        files = raw + b"/device files \xff"
        shutil.copytree(os.path.join(ROOT, "device_files"), os.fsdecode(files))
        doc = check_json(["caps", "host", "--json"], env={"NBX_DEVICE_FILES": os.fsdecode(files)})
        if bad not in doc["devices"][0]["device_file"]:
            sys.exit(f"NBX_DEVICE_FILES not UTF-8: device_file {doc['devices'][0]['device_file']!r}")
        check_json(["devices", "--json"], env={"NBX_DEVICE_FILES": os.fsdecode(files)})
        # And into a conformance report.
        report = raw + b"/report.json"
        rc, out, err = run(["conformance", "--backend", "host", "--ops", "neg", "--dtypes",
                            "float32", "--quick", "--overlay", overlay, "--json", report])
        if rc != 0:
            sys.exit(f"conformance --overlay <not UTF-8>: exit status {rc}: {err}")
        with open(report, "rb") as f:
            json.loads(f.read())
        print("ok  nbx conformance --overlay <not UTF-8> --json FILE  -> parses")
    finally:
        shutil.rmtree(tmp)


{"usage": check_usage, "status": check_status, "progress": check_progress,
 "utf8": check_utf8}[GROUP]()
print(f"{GROUP}: {CHECKS} checks held")
