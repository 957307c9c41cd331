#!/bin/bash
# Usage: run-bun.sh NAME PORT METRICSPORT; env passes through.
cd /work/main/examples/blog
NAME=$1; PORT=$2; MPORT=$3; shift 3
export JWT_SECRET=${JWT_SECRET:-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef}
export METRICS_PORT=$MPORT
nohup /work/main/node_modules/.bin/bun ../../bin/proceed.js start dist/main.js --port $PORT "$@" > /work/main/.scratch/obs-trial/$NAME.log 2>&1 &
echo $! > /work/main/.scratch/obs-trial/$NAME.pid
