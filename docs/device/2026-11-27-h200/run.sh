#!/bin/bash
# Session 23 device script. Stage 1: hardware parity of the never-run kernels, the latency/train
# bench (deferred map), Hive self-play throughput with the GPU preset, and pretraining + one
# AlphaZero iteration of the GPU preset on the GPU. LOCAL=1: a dry run on llvmpipe with small sizes.
T0=$(date +%s)
el() { echo "=== [t=$(($(date +%s) - T0))s] $*"; }
OUT=${OUT:-/tmp/out-local}
mkdir -p $OUT
LOG=$OUT/log.txt
exec > >(tee -a $LOG) 2>&1
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
el setup done
deno --version | head -1
timeout 40 $D tasks/gpu_info.ts 2>&1 | head -8 >$OUT/gpuinfo.txt
cat $OUT/gpuinfo.txt
if [ -z "$LOCAL" ] && ! grep -qi nvidia $OUT/gpuinfo.txt; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  timeout 40 $D tasks/gpu_info.ts 2>&1 | head -8 | tee $OUT/gpuinfo.txt
  grep -qi nvidia $OUT/gpuinfo.txt || { el "no NVIDIA adapter: stop"; exit 3; }
fi

el "1. hardware parity: readback, pipeline, pooled head, f16, cells head"
timeout ${T_TEST:-110} deno test -A --no-check --cached-only tests/nn/readback_test.ts \
  tests/nn/pipeline_test.ts tests/nn/pool_gpu_test.ts tests/nn/f16_test.ts \
  tests/nn/cell_logits_gpu_test.ts --filter "/^(GPU|GpuNet|ReadbackQueue|countGpuCalls|pipeline|f16|CPU fused)/" 2>&1 | grep -E "^[a-zA-Z].* \.\.\. |ok \||FAILED|rror|ignored" | tail -60

el "2. bench nn latency,train (deferred map vs eager; training step)"
timeout ${T_LAT:-150} $D tasks/bench.ts nn quick=1 only=latency,train --backend gpu --out $OUT/lat \
  2>&1 | tail -40

NET=${NET:-cells-default}
el "3. bench hive-selfplay net=$NET on the GPU"
timeout ${T_SP:-75} $D tasks/bench.ts hive-selfplay net=$NET seconds=${SP_SECONDS:-25} uhp=0 \
  --backend gpu --out $OUT/sp 2>&1 | tail -12

el "4. hive-pretrain $NET on the GPU"
mkdir -p /tmp/w
timeout ${T_PRE:-70} $D tasks/hive_pretrain.ts \
  --store models/hive-selfplay1.games.jsonl.gz,models/hive-default.games.jsonl \
  --net $NET --backend gpu --epochs 1 --batch ${PRE_BATCH:-256} \
  --positions-per-epoch ${PRE_POS:-12800} --val-positions ${PRE_VAL:-512} --lr-max 0.02 \
  --out /tmp/w/pre.kbnn --log $OUT/pretrain.log.jsonl --seed 7 2>&1 | tail -14
ls -la /tmp/w

el "5. az ${AZ:-hive-cells} --init the pretrained net on the GPU"
timeout ${T_AZ:-100} $D tasks/az.ts ${AZ:-hive-cells} --init /tmp/w/pre.kbnn --backend gpu \
  --dir /tmp/az --iterations 1 --games ${AZ_GAMES:-32} --playouts ${AZ_PLAYOUTS:-64} \
  --steps ${AZ_STEPS:-20} --arena-games ${AZ_ARENA:-2} --arena-playouts ${AZ_ARENA_PO:-32} \
  --max-plies ${AZ_MAXP:-120} 2>&1 | tail -25
cp /tmp/az/log.jsonl $OUT/az.log.jsonl 2>/dev/null

el "collect"
for d in lat sp; do
  for f in $OUT/$d/*.md; do [ -f "$f" ] && cp "$f" $OUT/$d-$(basename $f); done
done
cp $OUT/lat/nn.json $OUT/lat-nn.json 2>/dev/null
rm -rf $OUT/lat $OUT/sp
ls -la $OUT
el done
