#!/usr/bin/env python3
"""A stand-in for pytest where it is not installed (the lent H200 has no package registry):
runs this folder's tests with the part of pytest they use — fixtures (with params, request,
tmp_path), parametrize, raises (match=, .value), skip, importorskip, approx — and prints
"N passed, N failed, N skipped" like pytest's summary. Exit 1 on any failure.

    python3 python/tests/minipytest.py [-k SUBSTRING]
"""
import importlib
import inspect
import itertools
import math
import os
import re
import sys
import tempfile
import traceback
import types
from pathlib import Path


class Skipped(Exception):
    pass


class _Raises:
    def __init__(self, expected, match=None):
        self.expected, self.match, self.value = expected, match, None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            raise AssertionError(f"DID NOT RAISE {self.expected}")
        if not issubclass(kind, self.expected):
            return False
        if self.match and not re.search(self.match, str(value)):
            raise AssertionError(f"{value!r} does not match {self.match!r}")
        self.value = value
        return True


class _Approx:
    def __init__(self, expected, rel=1e-6, abs=1e-12):
        self.expected, self.rel, self.abs = expected, rel, abs

    def __eq__(self, other):
        return math.isclose(other, self.expected, rel_tol=self.rel, abs_tol=self.abs)


def _skip(reason=""):
    raise Skipped(reason)


def _importorskip(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        raise Skipped(f"could not import {name}")


def _fixture(function=None, params=None, ids=None):
    def mark(f):
        f._fixture = (params, ids)
        return f
    return mark(function) if function else mark


def _parametrize(names, values):
    def mark(f):
        f._parametrize = getattr(f, "_parametrize", []) + [(names, values)]
        return f
    return mark


pytest = types.ModuleType("pytest")
pytest.raises, pytest.approx, pytest.skip = _Raises, _Approx, _skip
pytest.importorskip, pytest.fixture = _importorskip, _fixture
pytest.mark = types.SimpleNamespace(parametrize=_parametrize)
sys.modules["pytest"] = pytest


def fixture_values(name, fixtures):
    """Every (id, value) a fixture takes: one per param, or its one value."""
    if name == "tmp_path":
        return [("", lambda: Path(tempfile.mkdtemp()))]
    f = fixtures[name]
    params, ids = f._fixture
    if params is None:
        return [("", f)]
    ids = ids or [str(i) for i in range(len(params))]
    return [(i, (lambda p=p: f(types.SimpleNamespace(param=p)))) for i, p in zip(ids, params)]


class Factory:
    """A fixture's value, made when its test runs (a skip inside it skips the test)."""

    def __init__(self, make):
        self.make = make


def cases(test, fixtures):
    """(label, make_kwargs) for each parametrize × fixture-param combination."""
    axes, given = [], set()
    for argnames, values in getattr(test, "_parametrize", []):
        keys = [a.strip() for a in argnames.split(",")]
        given.update(keys)
        axes.append([(str(i), dict(zip(keys, v if len(keys) > 1 else [v])))
                     for i, v in enumerate(values)])
    for n in inspect.signature(test).parameters:
        if n not in given:
            axes.append([(i, {n: Factory(make)}) for i, make in fixture_values(n, fixtures)])
    for combo in itertools.product(*axes):
        label = "-".join(i for i, _ in combo if i)
        parts = [part for _, part in combo]
        yield label, lambda parts=parts: {k: v.make() if isinstance(v, Factory) else v
                                          for part in parts for k, v in part.items()}


def main():
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    pattern = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else ""
    conftest = importlib.import_module("conftest")
    fixtures = {n: f for n, f in vars(conftest).items() if hasattr(f, "_fixture")}
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for path in sorted(here.glob("test_*.py")):
        module = importlib.import_module(path.stem)
        for name, test in vars(module).items():
            if not name.startswith("test_") or not callable(test):
                continue
            for label, make_kwargs in cases(test, fixtures):
                full = f"{path.name}::{name}" + (f"[{label}]" if label else "")
                if pattern not in full:
                    continue
                try:
                    test(**make_kwargs())
                    counts["passed"] += 1
                except Skipped as e:
                    counts["skipped"] += 1
                    print(f"SKIPPED {full}: {e}")
                except Exception:
                    counts["failed"] += 1
                    print(f"FAILED {full}\n{traceback.format_exc()}")
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
