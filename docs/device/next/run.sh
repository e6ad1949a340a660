#!/bin/bash
# The next device run (written in sessions 24-28, which had no device). Call 1, STAGES="1 2"
# (at most 7.7 minutes): hardware parity of the sessions' code, the bandwidth and FMA probes
# (bench gpu-mem, gpu-fma), batch-1 latency and then inference in f32 and f16 with the
# direct-or-Winograd tuner, the Winograd bridges' and F(6x6)'s A/B at batch 256. Call 2, STAGES="3 4 5" (at most
# 5.8; a warm machine keeps the tuning cache in /tmp): where the cells network's plans spend their
# GPU time by batch size (the H200's batch 16 took 43 ms a call against 19 for batch 8 of the FC
# network), the AlphaZero loop's steady self-play rate, and the training step one at a time, with
# the next step in flight, in f16 and without F(6x6) (the default tunes it). Default STAGES: all.
# Session 27: the default plans time F(6x6) against F(4x4) (inference and training); the A/B rows
# are now "F(6x6) not considered", and stage 1 adds its parity test. Session 28: F(7x7) too (rows
# "F(4x4) or F(6x6) or F(7x7)"); the A/B rows are "F(4x4) only".
# Stage caps: T_* override. LOCAL=1: a dry run on llvmpipe (NET=cells-tiny AZ=hive-cells-tiny
# NN_MODEL=tiny for small sizes).
source docs/device/setup.sh
export KIBITZ_TUNE_CACHE=${KIBITZ_TUNE_CACHE:-/tmp/kibitz-tune.json}
STAGES=" ${STAGES:-1 2 3 4 5} "
on() { [[ "$STAGES" == *" $1 "* ]]; }
el "stages$STAGES"

on 1 && el "1. parity: tuning cache, evaluator prepare, bench hive-selfplay profile" &&
timeout ${T_TEST:-90} deno test -A --no-check --cached-only tests/nn/tune_cache_test.ts \
  tests/alphazero/evaluator_gpu_test.ts tests/alphazero/hive_bench_test.ts \
  tests/nn/train_steps_test.ts tests/nn/gpu_ops_test.ts tests/gpu/mem_bench_test.ts \
  tests/nn/train_f16_test.ts tests/gpu/fma_bench_test.ts tests/nn/winograd_bridge_test.ts \
  tests/nn/winograd_large_tile_test.ts 2>&1 |
  grep -E "^[a-zA-Z].* \.\.\. |ok \||FAILED|rror|ignored" | tail -70
on 1 && el "1a. parity: the 16-column GEMM blocks at F(7x7) and F(4x4) (session 28)" &&
timeout ${T_NARROW:-15} deno test -A --no-check --cached-only tests/nn/winograd_gemm_test.ts \
  --filter "/16-column|64x16k16t64ruvp|32x16k32t32ruvp/" 2>&1 |
  grep -E "^[a-zA-Z].* \.\.\. |ok \||FAILED|rror" | tail -8

on 1 && el "1b. bench gpu-mem: bandwidth by kernel shape (the H200's copy probe made 1.48 TB/s)" &&
timeout ${T_MEM:-40} $D tasks/bench.ts gpu-mem --out $OUT/mem 2>&1 | tail -20
on 1 && el "1c. bench gpu-fma: register FMAs and the GEMM tilings' inner loops (the full GEMMs: 28-30 TFLOP/s)" &&
timeout ${T_FMA:-30} $D tasks/bench.ts gpu-fma --out $OUT/fma 2>&1 | tail -12

# Latency first (the batch-1 targets), then the inference rows: a process each, so a cap on the
# inference rows cannot cut the latency ones (bench nn keeps no tuning cache across processes, so
# batch 1 and 8 are tuned again in 2b: about 15 s).
on 2 && el "2a. bench nn latency: f32 and f16, the batch-1 and batch-8 tuners (direct, F(4x4), F(6x6), F(7x7))" &&
timeout ${T_LAT:-110} $D tasks/bench.ts nn quick=1 only=latency precision=f32,f16 \
  --backend gpu --out $OUT/lat 2>&1 | tail -30
on 2 && el "2b. bench nn infer: f32 and f16, 2 calls in flight at 64/256, the A/B rows at 256" &&
timeout ${T_INF:-150} $D tasks/bench.ts nn quick=1 only=infer precision=f32,f16 \
  --backend gpu --out $OUT/inf 2>&1 | tail -30

NET=${NET:-cells-default}
on 3 && el "3. bench hive-selfplay net=$NET profile=1 (tunes every padded size, then the disk cache has it)" &&
timeout ${T_SP:-100} $D tasks/bench.ts hive-selfplay net=$NET seconds=${SP_SECONDS:-30} uhp=0 \
  profile=1 --backend gpu --out $OUT/sp 2>&1 | tail -60

if on 4; then
  el "4. az ${AZ:-hive-cells} from random weights: the steady self-play rate"
  rm -rf /tmp/az
  timeout ${T_AZ:-80} $D tasks/az.ts ${AZ:-hive-cells} --backend gpu --dir /tmp/az \
    --iterations 1 --games ${AZ_GAMES:-64} --playouts ${AZ_PLAYOUTS:-64} --steps ${AZ_STEPS:-10} \
    --arena-games 2 --arena-playouts ${AZ_ARENA_PO:-8} --max-plies ${AZ_MAXP:-80} 2>&1 | tail -30
  cp /tmp/az/log.jsonl $OUT/az.log.jsonl 2>/dev/null
fi

on 5 && el "5. bench nn train: the step one at a time, with the next in flight, in f16 (trainPrecision), without F(6x6), GPU profile" &&
timeout ${T_TRAIN:-150} $D tasks/bench.ts nn quick=1 only=train ${NN_MODEL:+model=$NN_MODEL} --backend gpu \
  --out $OUT/train \
  2>&1 | tail -20
cp $KIBITZ_TUNE_CACHE $OUT/tune-cache.json 2>/dev/null

collect mem fma lat inf sp train
