#!/usr/bin/env bash
# Build ONLY arctic-inference's suffix-decoding extension and install the smallest `arctic_inference`
# package vLLM's suffix method imports, for the Python that will run vLLM (any CPython >= 3.10).
#
#   bash benchmarks/gpu/build_suffix.sh SOURCES TARGET
#
# SOURCES  the unpacked arctic-inference sdist (or `--pick`'s copy of it, below); what is read from it:
#            csrc/suffix_decoding/{CMakeLists.txt,bindings.cc,suffix_tree.cc,suffix_tree.h,int32_map.h}
#            arctic_inference/suffix_decoding/{__init__.py,cache.py}   PKG-INFO   LICENSE
# TARGET   a folder on vLLM's PYTHONPATH (the H200 kit: /tmp/site); gets arctic_inference/ and
#          arctic_inference-<version>.dist-info/ (METADATA and LICENSE: no entry_points.txt, so vLLM
#          loads no Arctic plugin; no CUDA custom ops are built).
#
# Why: vLLM (0.26.0 and 0.32.0, vllm/v1/spec_decode/suffix_decoding.py) needs only
# `from arctic_inference.suffix_decoding import SuffixDecodingCache`, and vllm/config/speculative.py
# only that the module `arctic_inference` is found. The full package also builds CUDA ops against
# torch and registers a vLLM general plugin that patches vLLM: neither is wanted for a measurement.
#
# The sources are third-party (Apache-2.0, Snowflake) and are NOT in this repository: fetch them on a
# machine with the network, then carry the picked folder to the device. Their setup.py imports torch
# even to read metadata, so use a Python that has torch (the CPU engine's venv has):
#   python -m pip download --no-deps --no-binary :all: --no-build-isolation arctic-inference==0.3.0 -d DIR
#   bash benchmarks/gpu/build_suffix.sh --pick DIR/arctic_inference-0.3.0.tar.gz .gpu/arctic-inference  # 9 files, ~130 KB
# (the H200 kit keeps .gpu/ out of git; carry that folder with the device call; methods_h200.sh looks there)
#
# Needs: cmake >= 3.18, a C++20 compiler, Python headers, and nanobind importable by $PYTHON
# (arctic-inference 0.3.0 builds with nanobind==2.9.2; `pip install nanobind==2.9.2`, or carry it in
# SOURCES: `pip install --target SOURCES nanobind==2.9.2`, 1.2 MB, is used when $PYTHON has none). Environment: PYTHON (default python3), BUILD_DIR (default a fresh temporary folder),
# JOBS (default nproc). Checks itself at the end: imports the installed package in a fresh $PYTHON
# with TARGET first on sys.path, drafts from a toy suffix tree, and finds no vLLM plugin entry point.
set -euo pipefail

FILES=(csrc/suffix_decoding/CMakeLists.txt csrc/suffix_decoding/bindings.cc csrc/suffix_decoding/suffix_tree.cc
       csrc/suffix_decoding/suffix_tree.h csrc/suffix_decoding/int32_map.h
       arctic_inference/suffix_decoding/__init__.py arctic_inference/suffix_decoding/cache.py PKG-INFO LICENSE)
die() { echo "build_suffix: $*" >&2; exit 2; }

if [ "${1:-}" = --pick ]; then   # SDIST.tar.gz -> a folder with only FILES (run where the sdist was fetched)
  [ $# = 3 ] || die "usage: build_suffix.sh --pick SDIST.tar.gz DEST"
  [ -f "$2" ] || die "no sdist at $2: fetch it with the pip download command in this script's header"
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  tar -xzf "$2" -C "$tmp"; top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -1)
  mkdir -p "$3"
  for f in "${FILES[@]}"; do [ -f "$top/$f" ] || die "$2 has no $f"; mkdir -p "$3/$(dirname "$f")"; cp "$top/$f" "$3/$f"; done
  echo "picked ${#FILES[@]} files of $(basename "$2") into $3 ($(du -sk "$3" | cut -f1) KB)"; exit 0
fi

[ $# = 2 ] || die "usage: build_suffix.sh SOURCES TARGET   (or --pick SDIST.tar.gz DEST)"
src=$(cd "$1" 2>/dev/null && pwd) || die "no sources folder $1"
for f in "${FILES[@]}"; do [ -f "$src/$f" ] || die "$src has no $f: pass the unpacked arctic-inference sdist (see the header)"; done
mkdir -p "$2"; target=$(cd "$2" && pwd)
py=${PYTHON:-python3}
command -v "$py" > /dev/null || die "no Python $py (set PYTHON)"
command -v cmake > /dev/null || die "cmake not found"
pyexe=$("$py" -c 'import sys; print(sys.executable)')
if ! "$py" -c 'import nanobind' 2> /dev/null && [ -d "$src/nanobind" ]; then export PYTHONPATH="$src${PYTHONPATH:+:$PYTHONPATH}"; fi
nbdir=$("$py" -m nanobind --cmake_dir 2>/dev/null) || die "nanobind is not importable by $pyexe: pip install nanobind==2.9.2, or carry it in $src (pip install --target $src nanobind==2.9.2)"
version=$(sed -n 's/^Version: *//p' "$src/PKG-INFO" | head -1); [ -n "$version" ] || die "no Version in $src/PKG-INFO"
build=${BUILD_DIR:-$(mktemp -d)}
gen=(); command -v ninja > /dev/null && gen=(-G Ninja)
t0=$SECONDS

echo "build_suffix: arctic-inference $version's suffix_decoding._C for $pyexe ($("$py" -V 2>&1)), nanobind $nbdir"
cmake -S "$src/csrc/suffix_decoding" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DPython_EXECUTABLE="$pyexe" -Dnanobind_DIR="$nbdir" -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$build/out" > "$build/configure.log" 2>&1 \
  || { tail -n 30 "$build/configure.log" >&2; die "cmake configure failed (log: $build/configure.log)"; }
cmake --build "$build" -j "${JOBS:-$(nproc)}" > "$build/build.log" 2>&1 \
  || { tail -n 30 "$build/build.log" >&2; die "cmake build failed (log: $build/build.log)"; }
suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
lib=$(find "$build/out" "$build" -maxdepth 1 -name "_C$suffix" -print -quit 2>/dev/null || true)
[ -n "$lib" ] || die "the build made no _C$suffix in $build"

# Assemble beside TARGET, then move into place: nothing half-written is left on failure.
stage=$(mktemp -d "$target/.arctic-inference.XXXXXX")
mkdir -p "$stage/arctic_inference/suffix_decoding" "$stage/arctic_inference-$version.dist-info"
cat > "$stage/arctic_inference/__init__.py" <<EOF
"""arctic-inference $version, suffix decoding only (built by specadvisor's benchmarks/gpu/build_suffix.sh):
nothing is imported here, no vLLM plugin is registered, no CUDA ops are built."""
EOF
cp "$src/arctic_inference/suffix_decoding/__init__.py" "$src/arctic_inference/suffix_decoding/cache.py" "$lib" "$stage/arctic_inference/suffix_decoding/"
cat > "$stage/arctic_inference-$version.dist-info/METADATA" <<EOF
Metadata-Version: 2.1
Name: arctic_inference
Version: $version
Summary: Snowflake LLM inference library (suffix decoding only: suffix_decoding._C and cache.py)
License: Apache-2.0
EOF
cp "$src/LICENSE" "$stage/arctic_inference-$version.dist-info/LICENSE"
rm -rf "$target/arctic_inference" "$target"/arctic_inference-*.dist-info
mv "$stage/arctic_inference" "$stage/arctic_inference-$version.dist-info" "$target/"
rmdir "$stage"

PYTHONPATH="$target${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$target" "$version" <<'PY'
import importlib.metadata as md, sys
from pathlib import Path
target, version = Path(sys.argv[1]).resolve(), sys.argv[2]
import arctic_inference.suffix_decoding as sd
from arctic_inference.suffix_decoding import SuffixDecodingCache
assert Path(sd.__file__).resolve().is_relative_to(target), f"imported {sd.__file__}, not the one in {target}"
cache = SuffixDecodingCache(max_tree_depth=24, max_cached_requests=4)
prompt = [5, 6, 7, 8, 9, 5, 6, 7]
cache.start_request("r", prompt)
cache.add_active_response("r", [8])
draft = cache.speculate("r", prompt + [8], max_spec_tokens=4)
assert draft.token_ids[:1] == [9], f"the suffix tree did not continue 5 6 7 8 -> 9: {draft.token_ids}"
assert md.version("arctic_inference") == version
plugins = [e.name for e in md.entry_points(group="vllm.general_plugins") if e.name.startswith("arctic")]
assert not plugins, f"an Arctic vLLM plugin is registered: {plugins}"
print(f"build_suffix: ok, {sd.__file__.rsplit('/', 2)[0]} imports; draft after 5 6 7 8: {draft.token_ids}")
PY
echo "build_suffix: installed arctic-inference $version (suffix decoding only) into $target in $((SECONDS - t0)) s"
