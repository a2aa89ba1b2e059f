"""The official MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``) against recallery's
MCP server over all three ways in: ``/mcp`` of a live ``recallery serve``, stdio
``recallery mcp --url`` and stdio ``recallery mcp --data-dir``, each with an owner key and a
read-only key. Prints pass or fail per check and exits 1 if any fails.

    npm install --prefix /tmp/inspector @modelcontextprotocol/inspector   # never into the repo
    python -m benchmarks.peers.mcp_inspector \
        --inspector /tmp/inspector/node_modules/.bin/mcp-inspector

Checks per transport and key: ``tools/list`` in ``--strict`` mode (no schema portability
error), ``list_memories`` answers, ``recall`` answers, and ``remember`` stores a turn for the
owner and is refused for the read-only key (a tool error, or not offered to it; not a crash
or a lost connection).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from recallery import Client
from recallery.testing.serve import live_serve

ADMIN = "rc-mcp-inspector-admin-key-000000000000"


def inspector(
    cli: str, target: list[str], *args: str, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """The Inspector CLI's exit status and output for one method call."""
    extra = [a for k, v in (env or {}).items() for a in ("-e", f"{k}={v}")]
    done = subprocess.run(
        [cli, "--cli", "--connect-timeout", "90000", *extra, *target, *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def checks(
    cli: str, target: list[str], env: dict[str, str], memory: str, owner: bool
) -> list[tuple[str, bool, str]]:
    """Each check's name, whether it passed, and the output when it did not."""
    results = []
    status, out = inspector(cli, target, "--method", "tools/list", "--strict", env=env)
    results.append(("tools/list --strict", status == 0 and '"recall"' in out, out))
    status, out = inspector(
        cli, target, "--method", "tools/call", "--tool-name", "list_memories", env=env
    )
    results.append(
        ("list_memories", status == 0 and memory in out and '"isError": true' not in out, out)
    )
    status, out = inspector(cli, target, "--method", "tools/call", "--tool-name", "recall",
                            "--tool-arg", "query=Lyon", f"memory={memory}", env=env)  # fmt: skip
    results.append(("recall", status == 0 and '"isError": true' not in out, out))
    status, out = inspector(cli, target, "--method", "tools/call", "--tool-name", "remember",
                            "--tool-arg", "user_input=I moved to Lyon", "agent_response=Noted",
                            f"memory={memory}", env=env)  # fmt: skip
    # a tool error, or the tool not offered to this key; never a failed connection
    refused = '"isError": true' in out or '"tool_not_found"' in out
    stored = status == 0 and "message_id" in out and not refused
    results.append(
        (
            "remember (stored)" if owner else "remember (refused)",
            stored if owner else refused and "Traceback" not in out,
            out,
        )
    )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inspector", required=True, help="the mcp-inspector executable")
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        with live_serve(data, {"RECALLERY_ADMIN_API_KEY": ADMIN}) as (url, _):
            with Client(url, ADMIN) as c:
                me = c.me()
                memory = c.create_memory("inspector", ["raw"], "BAAI/bge-small-en-v1.5@Builtin",
                                         "glm-4-flash@ZHIPU-AI").id  # fmt: skip
                c.add_turn([memory], user_input="I live in Lyon", agent_response="Noted")
                _, reader = c.create_api_key(me.user_id, name="read-only", capabilities=["read"])
            keys = {"owner": ADMIN, "read-only": reader}
            py = [sys.executable, "-m", "recallery.cli", "mcp"]
            for who, key in keys.items():
                ways = {
                    "/mcp": (
                        [
                            f"{url}/mcp",
                            "--transport",
                            "http",
                            "--header",
                            f"Authorization: Bearer {key}",
                        ],
                        {},
                    ),
                    "stdio --url": ([*py, "--url", url], {"RECALLERY_API_KEY": key}),
                    "stdio --data-dir": (
                        [*py, "--data-dir", str(data)],
                        {"RECALLERY_API_KEY": key},
                    ),
                }
                for way, (target, env) in ways.items():
                    for name, ok, out in checks(
                        args.inspector, target, env, memory, who == "owner"
                    ):
                        print(f"{'PASS' if ok else 'FAIL'}  {way:17} {who:9} {name}")
                        if not ok:
                            failed += 1
                            print("      " + json.dumps(out[-600:]))
    print(f"{failed} failed")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
