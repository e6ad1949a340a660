#!/bin/bash
# Sourced by a device script: logs to $OUT/log.txt, unpacks the carried Vulkan loader, Deno and its
# npm cache (GPU_RUN.md), finds the NVIDIA adapter, and defines `el` (a timestamped stage line), D
# (how tasks run) and `collect DIR...` (each bench folder's reports flattened into $OUT, as
# DIR-name, since only files come back). LOCAL=1: a dry run here (nothing unpacked, any adapter).
T0=$(date +%s)
el() { echo "=== [t=$(($(date +%s) - T0))s] $*"; }
OUT=${OUT:-/tmp/out-local}
mkdir -p $OUT
exec > >(tee -a $OUT/log.txt) 2>&1
if [ -z "$LOCAL" ]; then
  for f in .gl/*.deb; do dpkg -x $f /; done
  ldconfig
  mkdir -p /tmp/bin && xz -dc .dev/deno.xz >/tmp/bin/deno && chmod +x /tmp/bin/deno
  export PATH=/tmp/bin:$PATH
  tar -C /tmp -xJf .dev/denodir.tar.xz && export DENO_DIR=/tmp/dd2
  nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
  nproc
fi
export DENO_NO_UPDATE_CHECK=1 NO_COLOR=1
D="deno run -A --no-check --cached-only"
timeout 40 $D tasks/gpu_info.ts 2>&1 | head -8 >$OUT/gpuinfo.txt
cat $OUT/gpuinfo.txt
if [ -z "$LOCAL" ] && ! grep -qi nvidia $OUT/gpuinfo.txt; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  timeout 40 $D tasks/gpu_info.ts 2>&1 | head -8 | tee $OUT/gpuinfo.txt
  grep -qi nvidia $OUT/gpuinfo.txt || { el "no NVIDIA adapter: stop"; exit 3; }
fi
collect() {
  el "collect"
  local d f
  for d in "$@"; do
    for f in $OUT/$d/*.md $OUT/$d/*.json; do [ -f "$f" ] && cp "$f" "$OUT/$d-$(basename "$f")"; done
    rm -rf "${OUT:?}/$d"
  done
  ls -la $OUT
  el done
}
el "setup done"
