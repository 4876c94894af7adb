#!/bin/bash
# Submits the nightly run: a job array of SHARDS tasks (default 4) and the publish job that
# waits for all of them (afterok: a failed task leaves the run unpublished). Run it from cron
# or scrontab on a login node. QUARRY_SOURCE and QUARRY_OUT pass through to both jobs.
set -euo pipefail
cd "$(dirname "$0")"

shards="${SHARDS:-4}"
array_job=$(sbatch --parsable --array="0-$((shards - 1))" nightly-index.sbatch)
array_job="${array_job%%;*}"
sbatch --parsable --dependency="afterok:${array_job}" --export="ALL,RUN_ID=${array_job},SHARDS=${shards}" publish.sbatch
echo "run ${array_job}: ${shards} shards, then the publish job" >&2
