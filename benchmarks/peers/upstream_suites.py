"""Run a framework's own upstream tests for its reference implementation twice in this venv:
against the reference, and with the reference swapped for recallery's adapter on a live
``recallery serve``; print the pass/fail counts and every test that fails only with ours.

    python -m benchmarks.peers.upstream_suites langgraph
    python -m benchmarks.peers.upstream_suites openai-agents
    python -m benchmarks.peers.upstream_suites adk --tests PATH/test_in_memory_memory_service.py

The tests come from the installed version's sdist on PyPI (``pip download --no-binary :all:``),
never from this repository. google-adk's sdist ships no tests: give a snapshot of
``tests/unittests/memory/test_in_memory_memory_service.py`` at the installed version with
``--tests``. The suites need pytest-asyncio, pytest-mock and pytest-timeout, installed into the
work folder (``--target``), not into the venv. docs/adapters.md holds the counts and each
failure's reason.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from recallery.testing.serve import live_serve

KEY = "rc-upstream-suites-admin-key-0000000000"
#: Each test's limit, so every test ends with a verdict: three of AsyncSQLiteSession's tests wait
#: forever for an event only the reference's connection set-up sets, and ADK's thread-safety test
#: takes the reference itself over 60 s on a loaded machine.
TIMEOUT_S = 120


@dataclass(frozen=True)
class Suite:
    distribution: str  # whose sdist holds the tests
    tests: tuple[str, ...]  # the test files inside the sdist, relative to its top folder
    swap: str  # the plugin's body: replace the reference with ours


SWAP_HEAD = """
import os, itertools
from recallery import Client, AsyncClient
URL, KEY = os.environ["SUITE_URL"], os.environ["SUITE_KEY"]
_n = itertools.count()
def _memory():
    with Client(URL, KEY) as c:
        return c.create_memory(f"suite-{os.getpid()}-{next(_n)}", ["raw"],
                               "BAAI/bge-small-en-v1.5@Builtin", "glm-4-flash@ZHIPU-AI").id
"""

SUITES = {
    "langgraph": Suite(
        "langgraph-checkpoint",
        ("tests/test_store.py",),
        """
import langgraph.store.memory as reference
from recallery.integrations.langgraph import RecalleryStore
class InMemoryStore(RecalleryStore):  # a class, as tests spy on its methods
    def __init__(self, *args, **kwargs):  # the index configuration is the server's embedder
        super().__init__(Client(URL, KEY), _memory())
reference.InMemoryStore = InMemoryStore
""",
    ),
    "openai-agents": Suite(
        "openai-agents",
        # the files that test a Session through SQLiteSession or AsyncSQLiteSession's protocol
        (
            "tests/memory/test_session.py",
            "tests/memory/test_session_limit.py",
            "tests/extensions/memory/test_async_sqlite_session.py",
        ),
        """
import agents, agents.memory, agents.extensions.memory
from recallery.integrations.openai_agents import RecallerySession
_STORES = {}  # a database file is one memory; every ":memory:" database a new one
def _store(db_path):
    if str(db_path) == ":memory:":
        return _memory()
    return _STORES.get(str(db_path)) or _STORES.setdefault(str(db_path), _memory())
class SQLiteSession(RecallerySession):  # a class, as tests check isinstance and subclass it
    def __init__(self, session_id, db_path=":memory:", sessions_table="", messages_table="",
                 session_settings=None):
        super().__init__(session_id, AsyncClient(URL, KEY), _store(db_path),
                         session_settings=session_settings)
class AsyncSQLiteSession(SQLiteSession):
    async def close(self):  # the reference's close is a coroutine; ours ends the session at once
        super().close()
agents.SQLiteSession = agents.memory.SQLiteSession = SQLiteSession
agents.extensions.memory.AsyncSQLiteSession = AsyncSQLiteSession
""",
    ),
    "adk": Suite(
        "google-adk",
        (),
        """
import google.adk.memory.in_memory_memory_service as reference
from recallery.integrations.adk import RecalleryMemoryService
def InMemoryMemoryService():
    return RecalleryMemoryService(AsyncClient(URL, KEY), _memory())
reference.InMemoryMemoryService = InMemoryMemoryService
""",
    ),
}


def fetch_tests(suite: Suite, work: Path) -> tuple[Path, list[Path]]:
    """The sdist's top folder (the tests' root) and the suite's test files in it."""
    version = importlib.metadata.version(suite.distribution)
    pin = f"{suite.distribution}=={version}"
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*pip, pin, "-d", str(work)], check=True)
    (sdist,) = work.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(work, filter="data")
    top = next(p for p in work.iterdir() if p.is_dir())
    return top, [top / name for name in suite.tests]


def run_pytest(
    root: Path, tests: list[Path], plugin: str, work: Path, env: dict[str, str]
) -> dict[str, str]:
    """Each test's outcome (passed, failed, skipped) under ``plugin``'s swap (none: "").

    ``root`` is the tests' root (the sdist's top folder, so ``tests.x`` imports as the
    upstream suite imports it); it goes last on the path, never before the installed packages
    (the sdist's ``tests/mcp`` would shadow the ``mcp`` package)."""
    (work / "suite_swap.py").write_text(plugin)
    report = work / f"report-{bool(plugin)}.xml"
    command = [sys.executable, "-m", "pytest", *map(str, tests), "-p", "suite_swap", "-q",
               "-p", "no:cacheprovider", "-o", "asyncio_mode=auto", f"--junitxml={report}",
               f"--timeout={TIMEOUT_S}",  # a test that never returns fails, not stalls the run
               "--rootdir", str(root)]  # fmt: skip
    # the caller's path first (a checkout run with PYTHONPATH=src), the sdist's tests last
    first = [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []
    path = os.pathsep.join([*first, str(work), str(work / "deps"), str(root)])
    done = subprocess.run(command, env={**env, "PYTHONPATH": path}, check=False, cwd=root)
    if not report.exists():
        raise SystemExit(f"pytest wrote no report (exit {done.returncode}): see its output above")
    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        outcomes[name] = next((k for k in ("failure", "error", "skipped") if k in kinds), "passed")
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--tests", type=Path, help="a snapshot of the upstream test file")
    args = parser.parse_args()
    suite = SUITES[args.suite]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        deps = [sys.executable, "-m", "pip", "install", "-q", "--target", str(work / "deps")]
        subprocess.run([*deps, "pytest-asyncio", "pytest-mock", "pytest-timeout"], check=True)
        if args.tests:
            root, tests = args.tests.resolve().parent, [args.tests.resolve()]
        else:
            root, tests = fetch_tests(suite, work / "sdist")
        env = {**os.environ, "RECALLERY_ADMIN_API_KEY": KEY}
        with live_serve(work / "data", env) as (url, _):
            env.update(SUITE_URL=url, SUITE_KEY=KEY)
            reference = run_pytest(root, tests, "", work, env)
            ours = run_pytest(root, tests, SWAP_HEAD + suite.swap, work, env)
    for label, outcomes in (("reference", reference), ("recallery", ours)):
        counts = {k: list(outcomes.values()).count(k) for k in sorted(set(outcomes.values()))}
        print(f"{args.suite} {label}: {counts}")
    for name in sorted(ours):
        if ours[name] != "passed" and reference.get(name) == "passed":
            print(f"  fails only with recallery: {name} ({ours[name]})")


if __name__ == "__main__":
    main()
