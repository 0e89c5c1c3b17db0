# The farm and distcc on loopback, as the benches that compare them start them
# (run_host_compile_bench.sh, run_call_cost_bench.sh, run_tree_inputs_bench.sh). Source it;
# it defines:
#   farm_bench_start NAME BUILD_DIR
#                           builds farm-cc, farmctl, farm-coordinator and farm-worker in
#                           BUILD_DIR and sets `bin` to their directory; makes the work dir
#                           /var/tmp/NAME-XXXXXX (`work`, readable by the workers' sandbox) and
#                           exports XDG_STATE_HOME in it (a local farm of the bench's own: the
#                           user's stays current)
#   farm_bench_finish       for the caller's EXIT trap: `farmctl down` of $work/farm, then the
#                           work dir removed, or kept and named with FARM_BENCH_KEEP=1
#   local_farm_up DIR BIN   `farmctl up` of 2 sandboxed workers with 1 slot each, data in DIR,
#                           gRPC on a free loopback port, no HTTP; exports FARM_DIR=DIR; fails
#                           (the caller's `die`) when up fails or the workers do not sandbox
#                           (they would take no farm-cc compile)
#   distccd_up DIR          two distccd on 127.0.0.1:36321 and :36322 (1 job each, as nobody),
#                           pid and log files in DIR, a client dir DIR/client
# The caller's `die` reports failures.

farm_bench_start() {
  local name="$1" build_dir="$2"
  ninja -C "$build_dir" farm-cc farmctl farm-coordinator farm-worker >/dev/null
  bin="$(cd "$build_dir/bin" && pwd)"
  work="$(mktemp -d "/var/tmp/$name-XXXXXX")"
  chmod 755 "$work"
  export XDG_STATE_HOME="$work/state"
}

farm_bench_finish() {
  [ -f "$work/farm/farm.json" ] && "$bin/farmctl" down --data-dir "$work/farm" >/dev/null 2>&1
  if [ "${FARM_BENCH_KEEP:-0}" = 1 ]; then echo "work dir kept: $work" >&2; else rm -rf "$work"; fi
}

local_farm_up() {
  local dir="$1" bin="$2"
  "$bin/farmctl" up --workers 2 --slots 1 --data-dir "$dir" --listen 127.0.0.1:0 \
    --http-listen "" >"$dir.up.log" 2>&1 || {
    cat "$dir.up.log" >&2
    die "farmctl up failed"
  }
  export FARM_DIR="$dir"
  if ! "$bin/farmctl" workers | grep -q yes; then
    "$bin/farmctl" workers >&2
    die "the local farm's workers are not sandboxed, so they take no farm-cc compile." \
      "Fix: make bwrap run here (docs/security.md#sandboxed-actions)"
  fi
}

distccd_up() {
  local dir="$1"
  mkdir -p "$dir/client"
  chown nobody "$dir"  # distccd runs as nobody: its pid and log files
  for i in 1 2; do
    distccd --daemon --user nobody --allow 127.0.0.1 --listen 127.0.0.1 --port "3632$i" \
      --jobs 1 --pid-file "$dir/d$i.pid" --log-file "$dir/d$i.log" --log-level info
  done
  sleep 1
}
