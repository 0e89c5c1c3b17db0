#!/usr/bin/env bash
# Builds and runs the fleet simulator: the PyTorch-2.9.1-shaped build (bench/profiles/
# pytorch-2.9.1.json: 397 CUDA TUs x 3 archs = 1,191 device actions, 6,500 host C++ TUs)
# through a real coordinator with 8, 32 and 128 simulated hosts (3 m8g.4xlarge : 1 grace),
# 10 ms of real time per second of compile (a ~1.5 h build takes ~1 min; at 1 ms the farm's
# fixed ~50 ms per nvcc call would weigh 10x more against the compile times). Prints each run's
# table and then makespan / lower bound per fleet size. Extra arguments go to every run
# (e.g. --jobs 64, --json); FLEET_SIM_HOSTS="8 32" picks the sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build fleet_sim farm-coordinator >/dev/null
summary=""
for hosts in ${FLEET_SIM_HOSTS:-8 32 128}; do
  out=$(build/bin/fleet_sim --profile bench/profiles/pytorch-2.9.1.json --hosts "$hosts" \
          --ms-per-second "${FLEET_SIM_MS_PER_SECOND:-10}" "$@")
  echo "$out"
  summary+=$(printf '%5s hosts: %s\n' "$hosts" \
    "$(echo "$out" | awk '/^  makespan  /{m=$2} /^  lower bound/{b=$3; bind=$0; sub(/.*binding: /,"",bind)}
                          /makespan \/ bound/{r=$4} END{printf "makespan %s s, bound %s s (%s), ratio %s", m, b, bind, r}')")
  summary+=$'\n'
done
case " $* " in *" --json "*) exit 0 ;; esac  # the JSON objects carry the figures
echo
echo "makespan / lower bound per fleet size:"
echo -n "$summary"
