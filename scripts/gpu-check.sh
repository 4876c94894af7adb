#!/usr/bin/env bash
# The GPU acceptance run, on a GPU host (no Rust there), over what
# scripts/package-device.sh put in target/device/. Each step writes its output under
# /tmp/quarry-gpu/results, packed into $OUT/results.tar.gz after each step:
#
#   parity    kernel parity: each CUDA kernel against its CPU twin (cuda_parity, and
#             cuda_encoder_parity where it was carried: the encoder kernels)
#   golden    golden embeddings on the GPU at f32/f16/bf16 (needs the model a first call carried),
#             in each of FUSED_MODES (default "0 1 1cc 1wmma": 0 without the fused steps, 1 with
#             them (attention on tensor cores through mma.sync, in registers, for f16/bf16; the
#             default), 1cc with them and attention on CUDA cores, 1wmma with them and attention
#             on tensor cores through WMMA (f32 refused, as the test expects); 1reg names the
#             default's kernel; 1erf the default with the feed-forward GELU in its erf form, a
#             pass of its own, not in the product's epilogue; 1unpad the default with the
#             row-wise steps over the real tokens only, the attention in the register kernel's
#             ragged layout, --gpu-unpadded-rows); each runs even when one before it failed
#   tests     parity and golden
#   embed     bench-embed tokens/s at full windows, f32 / f16 / bf16 (PRECISIONS, BATCH_TOKENS),
#             in each of FUSED_MODES (as golden) and POOLING_MODES (QUARRY_FUSED_POOLING);
#             with EMBED_CALLS=N (2,048: a run's groups) the texts as calls of N chunks too,
#             one call after another against one stream of calls; EMBED_SPREAD=1 cuts the
#             chunks to lengths spread from 36 tokens to the window, as a run's are (the
#             padding that mode 1unpad leaves out)
#   golden-cli the golden texts through `quarry embed` on the GPU at f32/f16/bf16, cosines
#             against the golden file's (needs only quarry and the model: one call)
#   kernels   bench-kernels at 1M x 384: flat top-k QPS vs the bandwidth and FP32 roofs, IVF build
#             (KERNELS_FAISS_BASELINE=0 skips FAISS's CPU build beside it, about 34 s on 16 cores)
#   hnsw      bench-hnsw-build: HNSW by quarry's graph build (the base level's kNN lists on
#             the GPU, CAGRA's pruning, FAISS's insertion above it) against FAISS's own CPU
#             build at HNSW_BASELINE_ROWS (default 200,000), then alone at HNSW_ROWS (default
#             1,000,000): build s, recall@10 and QPS at efSearch 16..256; at 1M also the
#             kNN lists against exact search over KNN_RECALL_SAMPLE rows (default 1,000)
#   hnsw-real bench-hnsw-build on the model's own embeddings: the snapshot the e2e step wrote
#             (1M gen-corpus chunks), 1,000 rows held out; against FAISS's CPU build unless
#             HNSW_REAL_FAISS=0 (about 100 s on 16 cores at 1M); the kNN lists' recall too;
#             one graph build per GRAPH_VARIANTS entry (MEMBERSHIPS:PRUNE, default
#             "2:detours,3:detours,2:neighbourhood,3:neighbourhood": k-means lists a row
#             joins, CAGRA's pruning or HNSW's heuristic; `hnsw` builds GRAPH_VARIANTS too,
#             default the build's own 2:detours)
#   cpu       bench-cpu-stages over 100k gen-corpus documents on 1, 4 and 16 threads: can the
#             machine's CPU parse, chunk and tokenize as fast as the GPU embeds? Then CPU
#             embedding on all its cores in f32 and bf16, at token budgets of 4,096 (the CPU
#             default) and 16,384 (CPU_EMBED_CHUNKS, default 2,000; bf16 runs in f32 where the
#             CPU has no AVX512-BF16, as the log says)
#   cpu-scaling  CPU embedding at 1, 2, 4, 8 and 16 threads (SCALING_THREADS; RAYON_NUM_THREADS),
#             each with one batch at a time (--cpu-lanes 1) and with the default lanes (one
#             batch per thread), SCALING_CHUNKS_PER_THREAD (default 64) 256-token chunks per
#             thread, bf16 (SCALING_PRECISIONS, e.g. "bf16 f32"); the CPU's cores, sockets and threads per
#             core from lscpu first
#   e2e       gen-corpus (1M documents), then `quarry index` on the GPU into /tmp/quarry-gpu/snapshot
#             (E2E_FUSED=1: with the fused encoder steps, as in golden, 1unpad without the padding
#             rows; default: the build's choice)
#             (ivf-flat with the default trainer, which must be quarry's kernels on the GPU;
#             E2E_INDEX=auto measures the default index instead: HNSW at 1M, by the graph build on the GPU)
#   pipeline  `quarry bench-pipeline` over the same 1M-document corpus, seeded vectors in place of
#             the model: fetch, parse + chunk, the indexes, recall check and segment write on the
#             machine's CPU with no GPU embedding beside them, and the run's peak memory
#             (PIPELINE_INDEX, default ivf-flat: FAISS trains, the kernels being on the CPU here)
#   profile   ncu's time per kernel of a 1,000-chunk bench-embed (PROFILE_PRECISION, default f16;
#             PROFILE_FUSED, a mode as above, default 1), summed by kernel name (scripts/ncu-summary.py)
#   profile-kernels  ncu's time per kernel of bench-kernels' flat top-k over 1M x 384 rows, at 1
#             query and at 1,024 queries apart (how much of each batch is the SGEMM, how much the
#             selection and the copies)
#   serve-cpu the CPU-only build (quarry-cpu, packaged with --with-cpu) inspects and searches
#             that snapshot (a later call on the same warm machine: see package-device.sh)
#   search    `quarry bench bench/workloads/gpu-search.toml`: vector search QPS through HTTP at
#             concurrency 1, 16 and 64 with the query embedding on the GPU (the GPU's default
#             query batching: 2 threads, up to 64 queries a pass), then the same with the CPU's
#             (16 threads of up to 4: gpu-search-cpu-passes.toml), then gpu-search.toml with
#             quarry-cpu
#
#   e.g. "scripts/gpu-check.sh parity", then "… gpu-check.sh hnsw golden-cli embed cpu-scaling search
#   profile", then "E2E_INDEX=auto scripts/gpu-check.sh e2e" (serve-cpu reads that snapshot on the
#   same machine); what each call carries and the settings that fit 15 minutes of a GPU host:
#   see package-device.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dev="${DEVICE_DIR:-$root/target/device}"
work=/tmp/quarry-gpu
# Every step's logs and reports go to $work/results; after each step that folder is packed
# into $OUT/results.tar.gz (the device tool brings back 8 files at most, and what $OUT
# holds when a call runs out of time).
out="$work/results"
mkdir -p "$out"
for packed in "$dev"/bin/*.xz; do
  [ -e "$packed" ] || continue
  [ -x "${packed%.xz}" ] || { xz -dkf "$packed" && chmod +x "${packed%.xz}"; }
done
if [ -f "$dev/model/model.safetensors.xz" ] && [ ! -f "$dev/model/model.safetensors" ]; then
  xz -dk "$dev/model/model.safetensors.xz"
fi
DEVICE_DIR="$dev" source "$root/scripts/device-libs.sh"
for binary in "$dev"/bin/*; do
  case "$binary" in *.xz) continue ;; esac
  missing="$(ldd "$binary" 2>/dev/null | grep 'not found' || true)"
  [ -z "$missing" ] || echo "warning: $(basename "$binary") misses shared libraries: $missing" >&2
done
export QUARRY_MODEL="$dev/model" QUARRY_SHARED_DIR="$dev/shared" OMP_WAIT_POLICY=PASSIVE
# CHECK_DEVICE=cpu PRECISIONS=f32 E2E_PRECISION=f32 dry-runs the script on a machine without a GPU.
device="${CHECK_DEVICE:-cuda}"
gpu="$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)"
echo "GPU: $gpu" | tee "$out/device.txt"
# Datasheet figures (SXM): HBM bandwidth in GB/s, FP32 (no tensor cores) in TFLOP/s.
case "$gpu" in
  *H200*) bandwidth=4800 fp32_tflops=67 ;;
  *H100*) bandwidth=3350 fp32_tflops=67 ;;
  *) bandwidth=0 fp32_tflops=0 ;;
esac
quarry="$dev/bin/quarry"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(tests embed kernels cpu e2e)
# Every step but the kernels' parity and benchmarks and the graph build on seeded vectors
# embeds with the model.
for step in "${steps[@]}"; do
  case "$step" in parity|kernels|profile-kernels|hnsw) continue ;; esac
  if [ ! -f "$QUARRY_MODEL/model.safetensors" ]; then
    echo "error: step $step needs the model at $QUARRY_MODEL: carry target/device/model (scripts/package-device.sh)" >&2
    exit 1
  fi
done
# The fused encoder steps of `mode` (see golden above) in the environment.
use_fused_mode() {
  case "$1" in
    0|1) export QUARRY_FUSED_STEPS="$1"; unset QUARRY_ATTENTION_KERNEL QUARRY_GPU_GELU QUARRY_GPU_UNPADDED_ROWS ;;
    1cc) export QUARRY_FUSED_STEPS=1 QUARRY_ATTENTION_KERNEL=cuda-cores; unset QUARRY_GPU_GELU QUARRY_GPU_UNPADDED_ROWS ;;
    1reg) export QUARRY_FUSED_STEPS=1 QUARRY_ATTENTION_KERNEL=tensor-core-registers; unset QUARRY_GPU_GELU QUARRY_GPU_UNPADDED_ROWS ;;
    1wmma) export QUARRY_FUSED_STEPS=1 QUARRY_ATTENTION_KERNEL=tensor-cores; unset QUARRY_GPU_GELU QUARRY_GPU_UNPADDED_ROWS ;;
    1erf) export QUARRY_FUSED_STEPS=1 QUARRY_GPU_GELU=erf; unset QUARRY_ATTENTION_KERNEL QUARRY_GPU_UNPADDED_ROWS ;;
    1unpad) export QUARRY_FUSED_STEPS=1 QUARRY_GPU_UNPADDED_ROWS=1; unset QUARRY_ATTENTION_KERNEL QUARRY_GPU_GELU ;;
    *) echo "unknown fused mode $1 (0, 1, 1cc, 1reg, 1wmma, 1erf, 1unpad)" >&2; return 2 ;;
  esac
}
# Nsight Compute's command line, from PATH or its usual install folder.
find_ncu() {
  local ncu
  ncu="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
  [ -n "$ncu" ] || { echo "error: no ncu on this machine" >&2; return 1; }
  echo "$ncu"
}
# Each step runs on when the one before it failed (a GPU host's time is short: one call should say
# everything it can); the summary at the end lists each step's exit status.
run_step() {
  local step="$1"
  case "$step" in
    parity|golden|tests)
      # Every test binary and fused mode runs even when one before it failed; the step fails
      # at the end if any did.
      local failures=0
      if [ "$step" != golden ]; then
        "$dev/bin/cuda_parity" --test-threads 1 2>&1 | tee "$out/cuda_parity.txt" || failures=$((failures + 1))
        if [ -x "$dev/bin/cuda_encoder_parity" ]; then
          "$dev/bin/cuda_encoder_parity" --test-threads 1 2>&1 | tee "$out/cuda_encoder_parity.txt" || failures=$((failures + 1))
        fi
      fi
      if [ "$step" != parity ]; then
        # EMBED_SPREAD=1's reports are named apart, so a full-window run beside them keeps its own.
      spread=""
      [ "${EMBED_SPREAD:-0}" = 0 ] || spread="-spread"
      for fused in ${FUSED_MODES:-0 1 1cc 1wmma}; do
          (use_fused_mode "$fused" && "$dev/bin/golden_embeddings" --test-threads 1) 2>&1 | tee "$out/golden_embeddings-fused$fused.txt" || failures=$((failures + 1))
        done
      fi
      [ "$failures" = 0 ] || { echo "$failures test binary runs failed" >&2; return 1; }
      ;;
    embed)
      # BATCH_TOKENS="16384 65536" also times those token budgets (default: sized from GPU memory).
      # POOLING_MODES="0 1 0 1" also times candle's mean pooling (0) against quarry's kernel
      # (1, the default), alternating; the JSON reports of the last run of each are kept.
      # EMBED_SPREAD=1's reports are named apart, so a full-window run beside them keeps its own.
      spread=""
      [ "${EMBED_SPREAD:-0}" = 0 ] || spread="-spread"
      for fused in ${FUSED_MODES:-0 1 1cc 1wmma}; do
        use_fused_mode "$fused"
        for precision in ${PRECISIONS:-f32 f16 bf16}; do
          for budget in ${BATCH_TOKENS:-gpu}; do
            if [ "$budget" = gpu ]; then unset QUARRY_BATCH_TOKENS; else export QUARRY_BATCH_TOKENS="$budget"; fi
            for pooling in ${POOLING_MODES:-1}; do
              export QUARRY_FUSED_POOLING="$pooling"
              echo "-- fused steps $fused, fused pooling $pooling, $precision, token budget $budget"
              extra=()
              [ "${EMBED_CALLS:-0}" = 0 ] || extra=(--calls "$EMBED_CALLS")
              [ -z "$spread" ] || extra+=(--spread-lengths)
              "$quarry" bench-embed --device "$device" --precision "$precision" --chunks "${EMBED_CHUNKS:-100000}" "${extra[@]}" --json "$out/embed$spread-fused$fused-pool$pooling-$precision-$budget.json"
            done
          done
        done
      done 2>&1 | tee "$out/embed$spread.txt"
      ;;
    golden-cli)
      # The shipped binary (no test binaries needed): `quarry embed` of the golden texts on the
      # GPU at each precision, each embedding's cosine with the golden one against its bar
      # (f32 0.9999, f16 and bf16 0.999). Every precision runs; the step fails if one did.
      golden_file="$QUARRY_SHARED_DIR/reference/minilm-golden.jsonl"
      {
        failed=0
        for precision in ${GOLDEN_PRECISIONS:-f32 f16 bf16}; do
          "$quarry" embed --device "$device" --precision "$precision" < "$golden_file" > "$out/golden-cli-$precision.jsonl" || { failed=1; continue; }
          python3 - "$golden_file" "$out/golden-cli-$precision.jsonl" "$precision" <<'PY' || failed=1
import json, math, sys
golden = [json.loads(line)["embedding"] for line in open(sys.argv[1])]
got = [json.loads(line)["embedding"] for line in open(sys.argv[2])]
bar = 0.9999 if sys.argv[3] == "f32" else 0.999
assert len(got) == len(golden), f"{len(got)} embeddings for {len(golden)} texts"
cosines = [sum(a * b for a, b in zip(g, w)) / (math.sqrt(sum(a * a for a in g)) * math.sqrt(sum(b * b for b in w))) for g, w in zip(got, golden)]
print(f"{sys.argv[3]}: {len(cosines)} golden texts, lowest cosine {min(cosines):.6f} (bar {bar})")
sys.exit(0 if min(cosines) >= bar else 1)
PY
        done
        exit "$failed"
      } 2>&1 | tee "$out/golden-cli.txt"
      ;;
    kernels)
      "$quarry" bench-kernels --device "$device" --rows "${KERNEL_ROWS:-1000000}" --dim 384 --batches 1,16,256,1024 --nlist 4096 \
        --train-sample 262144 --bandwidth-gbs "$bandwidth" --fp32-tflops "$fp32_tflops" --json "$out/kernels.json" \
        $([ "${KERNELS_FAISS_BASELINE:-1}" = 1 ] || echo --no-faiss-baseline) 2>&1 | tee "$out/kernels.txt"
      ;;
    hnsw)
      # The graph build (kNN lists on the GPU) against FAISS's CPU insertion on every core,
      # at HNSW_BASELINE_ROWS (FAISS's build of 1M takes minutes), then the graph build
      # alone at HNSW_ROWS; recall@10 and QPS at efSearch 16..256 from the saved files, and
      # at 1M the kNN lists against exact search over 1,000 rows (KNN_RECALL_SAMPLE; 0: not).
      "$quarry" bench-hnsw-build --device "$device" --rows "${HNSW_BASELINE_ROWS:-200000}" --queries 1000 \
        --graph-variants "${GRAPH_VARIANTS:-2:detours}" --json "$out/hnsw-baseline.json" 2>&1 | tee "$out/hnsw-baseline.txt"
      "$quarry" bench-hnsw-build --device "$device" --rows "${HNSW_ROWS:-1000000}" --queries 1000 --no-faiss-baseline \
        --graph-variants "${GRAPH_VARIANTS:-2:detours}" \
        --knn-recall-sample "${KNN_RECALL_SAMPLE:-1000}" --json "$out/hnsw.json" 2>&1 | tee "$out/hnsw.txt"
      ;;
    hnsw-real)
      [ -f "$work/snapshot/LATEST" ] || { echo "error: no snapshot at $work/snapshot: run the e2e step first on this machine" >&2; exit 1; }
      baseline=()
      [ "${HNSW_REAL_FAISS:-1}" = 1 ] || baseline=(--no-faiss-baseline)
      "$quarry" bench-hnsw-build --device "$device" --snapshot "$work/snapshot" --queries 1000 "${baseline[@]}" \
        --graph-variants "${GRAPH_VARIANTS:-2:detours,3:detours,2:neighbourhood,3:neighbourhood}" \
        --knn-recall-sample "${KNN_RECALL_SAMPLE:-1000}" --json "$out/hnsw-real.json" 2>&1 | tee "$out/hnsw-real.txt"
      ;;
    cpu)
      [ -d "$work/cpu-corpus" ] || "$quarry" gen-corpus --documents "${CPU_DOCUMENTS:-100000}" --out "$work/cpu-corpus"
      "$quarry" bench-cpu-stages --corpus "$work/cpu-corpus" --threads "${CPU_THREADS:-1,4,16}" --json "$out/cpu-stages.json" 2>&1 | tee "$out/cpu-stages.txt"
      grep -o 'avx512_bf16' /proc/cpuinfo | head -1 > "$out/cpu-embed.txt" || echo "no avx512_bf16" > "$out/cpu-embed.txt"
      # Each precision at the CPU's default token budget (4096) and at 16384: does the
      # smaller budget that suits 2 cores leave 16 cores too few rows?
      for precision in f32 bf16; do
        for tokens in 4096 16384; do
          echo "--batch-tokens $tokens" | tee -a "$out/cpu-embed.txt"
          "$quarry" bench-embed --device cpu --precision "$precision" --batch-tokens "$tokens" --chunks "${CPU_EMBED_CHUNKS:-2000}" 2>&1 | tee -a "$out/cpu-embed.txt"
        done
      done
      ;;
    cpu-scaling)
      { lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|L2|L3)' || true
        echo "physical cores (distinct socket/core ids): $(grep -E '^(physical id|core id)' /proc/cpuinfo | paste - - | sort -u | wc -l)"
        for precision in ${SCALING_PRECISIONS:-bf16}; do
          for threads in ${SCALING_THREADS:-1 2 4 8 16}; do
            for lanes in 1 default; do
              [ "$threads" = 1 ] && [ "$lanes" = default ] && continue
              echo "-- $precision, $threads threads, lanes $lanes"
              RAYON_NUM_THREADS="$threads" "$quarry" bench-embed --device cpu --precision "$precision" \
                --chunks $((threads * ${SCALING_CHUNKS_PER_THREAD:-64})) --repetitions 2 \
                $([ "$lanes" = 1 ] && echo --cpu-lanes 1) --json "$out/cpu-scaling-$precision-$threads-$lanes.json" | tail -1
            done
          done
        done; } 2>&1 | tee "$out/cpu-scaling.txt"
      ;;
    e2e)
      [ -d "$work/corpus" ] || "$quarry" gen-corpus --documents "${E2E_DOCUMENTS:-1000000}" --out "$work/corpus"
      rm -rf "$work/snapshot"
      # E2E_FUSED (a mode as for golden) runs it with those fused steps, its files named so.
      suffix=""
      if [ -n "${E2E_FUSED:-}" ]; then use_fused_mode "$E2E_FUSED"; suffix="-fused$E2E_FUSED"; fi
      # The keyword parts' and the row stream's debug lines say what was left to the cut.
      QUARRY_LOG="${QUARRY_LOG:-info,tantivy=warn,quarry_indexer::index::keyword_parts=debug,quarry_indexer::pipeline::row_stream=debug}" \
        "$quarry" index "$work/corpus" --out "$work/snapshot" --device "$device" --precision "${E2E_PRECISION:-f16}" \
        --index "${E2E_INDEX:-ivf-flat}" --reuse off --progress log --report "$out/e2e$suffix-report.json" 2>&1 | tee "$out/e2e$suffix.txt"
      [ "${E2E_INDEX:-ivf-flat}" != ivf-flat ] || grep -q "train (quarry kernels)" "$out/e2e$suffix.txt" || echo "warning: the default IVF trainer was not quarry's kernels on the GPU" >&2
      [ "${E2E_INDEX:-ivf-flat}" != auto ] || grep -q "by the graph build on cuda" "$out/e2e$suffix.txt" || echo "warning: the default HNSW was not built by the graph build on the GPU" >&2
      ;;
    pipeline)
      [ -d "$work/corpus" ] || "$quarry" gen-corpus --documents "${E2E_DOCUMENTS:-1000000}" --out "$work/corpus"
      rm -rf "$work/seeded"
      "$quarry" bench-pipeline "$work/corpus" --out "$work/seeded" --index "${PIPELINE_INDEX:-ivf-flat}" --reuse off --progress log \
        --report "$out/pipeline-report.json" 2>&1 | tee "$out/pipeline.txt"
      rm -rf "$work/seeded"
      ;;
    serve-cpu)
      cpu="$dev/bin/quarry-cpu"
      [ -x "$cpu" ] || { echo "error: $cpu missing: package with --with-cpu and carry it" >&2; exit 1; }
      [ -f "$work/snapshot/LATEST" ] || { echo "error: no snapshot at $work/snapshot: run the e2e step first on this machine" >&2; exit 1; }
      { "$cpu" inspect "$work/snapshot" | tail -25
        "$cpu" search "$work/snapshot" "river climate drought" --device cpu --top-k 5
        "$cpu" search "$work/snapshot" "contract liability appeal" --device cpu --mode hybrid --top-k 5; } 2>&1 | tee "$out/serve-cpu.txt"
      ;;
    search)
      # Search load through HTTP, query embeddings on the GPU (concurrent searches share passes),
      # then with the CPU's narrower passes from more threads (SEARCH_CPU_PASSES_WORKLOAD; empty
      # skips it), then the first workload with the CPU-only build when it was carried.
      workload="${SEARCH_WORKLOAD:-$root/bench/workloads/gpu-search.toml}"
      narrow="${SEARCH_CPU_PASSES_WORKLOAD-$root/bench/workloads/gpu-search-cpu-passes.toml}"
      "$quarry" bench "$workload" --out "$out/search-cuda" 2>&1 | tail -40
      if [ -n "$narrow" ]; then
        "$quarry" bench "$narrow" --out "$out/search-cuda-cpu-passes" 2>&1 | tail -40
      fi
      if [ -x "$dev/bin/quarry-cpu" ]; then
        "$dev/bin/quarry-cpu" bench "$workload" --out "$out/search-cpu" 2>&1 | tail -40
      fi
      ;;
    profile)
      ncu="$(find_ncu)"
      use_fused_mode "${PROFILE_FUSED:-1}"
      QUARRY_BATCH_TOKENS="${PROFILE_BATCH_TOKENS:-65536}" "$ncu" --metrics gpu__time_duration.sum --print-summary per-kernel \
        "$quarry" bench-embed --device "$device" --precision "${PROFILE_PRECISION:-f16}" --chunks 1000 --repetitions 1 > "$out/profile-ncu.txt" 2>&1
      python3 "$root/scripts/ncu-summary.py" "$out/profile-ncu.txt" | tee "$out/profile.txt"
      ;;
    profile-kernels)
      ncu="$(find_ncu)"
      for batch in 1 1024; do
        # A small IVF part (nlist 64), no FAISS CPU baseline: the top-k kernels are the subject.
        "$ncu" --metrics gpu__time_duration.sum --print-summary per-kernel "$quarry" bench-kernels --device "$device" \
          --rows "${KERNEL_ROWS:-1000000}" --dim 384 --batches "$batch" --nlist 64 --train-sample 4096 --no-faiss-baseline \
          > "$out/profile-kernels-$batch-ncu.txt" 2>&1
        echo "-- flat top-k, batches of $batch queries"
        python3 "$root/scripts/ncu-summary.py" "$out/profile-kernels-$batch-ncu.txt"
      done 2>&1 | tee "$out/profile-kernels.txt"
      ;;
    *) echo "unknown step $step (parity, golden, golden-cli, tests, embed, kernels, hnsw, hnsw-real, cpu, cpu-scaling, e2e, serve-cpu, search, profile, profile-kernels)" >&2; return 2 ;;
  esac
}
summary=()
failed=0
for step in "${steps[@]}"; do
  echo "== $step ($(date -u +%FT%TZ))"
  start=$(date +%s)
  status=0
  # In the background so that set -e holds inside (a subshell tested with || ignores it).
  ( set -euo pipefail; run_step "$step" ) &
  wait $! || status=$?
  summary+=("$step: exit $status, $(( $(date +%s) - start )) s")
  [ "$status" = 0 ] || failed=1
  [ -z "${OUT:-}" ] || tar -C "$work" -czf "$OUT/results.tar.gz" results
done
printf '%s\n' "== summary" "${summary[@]}" | tee "$out/summary.txt"
[ -z "${OUT:-}" ] || tar -C "$work" -czf "$OUT/results.tar.gz" results
exit "$failed"
