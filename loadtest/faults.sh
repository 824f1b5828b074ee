#!/usr/bin/env bash
# faults.sh runs rankwire's fault suite (loadtest/faults, docs/CLUSTERING.md
# "Fault suite"): every fault RUNS times, each on a fresh cluster (three
# nodes; five for kill9-two),
# with the exactly-once checker, and prints the table. As root it puts each
# node in its own network namespace and adds the partitions and the full
# disk; otherwise it runs the faults that need neither (kill -9, SIGSTOP,
# rolling restart, data corruption). rwfault stops every process it starts
# by its PID and removes its namespaces, bridge and mounts, also on failure.
#
#	loadtest/faults.sh                 # RUNS=5
#	RUNS=1 loadtest/faults.sh -faults kill9-leader,partition-leader -v
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
flags=()
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1; then
	flags=(-netns)
fi
exec go run ./loadtest/cmd/rwfault -runs "$RUNS" "${flags[@]}" "$@"
