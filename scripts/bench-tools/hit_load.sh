# Hits under cold renders (issue 37), sourced by scripts/bench (`hitload` in BENCH_OPS, on by
# default): what a cache hit costs in latency while every worker renders, and what concurrent
# hits cost the renders. kiln as the issue measured it: disk cache on, memory cache off.
#
#   hit alone          wrk -c1 on a disk hit (the op2 URL, rendered once first): p50, p99
#   cold alone         wrk -c4 (2 threads), each request a new variant (a fresh `cb:`) of a
#                      w:1200 JPEG of the 12 MP photo: every request renders; req/s
#   both at once       the two together for the same time: the hit's p50/p99 under renders
#                      (hits paced at most 500 a second: BENCH_HIT_DELAY_MS), and the
#                      renders' req/s beside hits
#
# First as nginx and kiln run by default, then with the lookup lane (server.lookup_workers = 1
# and nginx/kiln-lookup.conf), then with nginx's front cache in front of the lane, after which the
# standard nginx configuration is restored.
#
# Sets HIT_LOAD_LINES (printed at the end of the report). Uses scripts/bench's restart_kiln,
# $base, $run_dir, $duration, $port, $images, to_ms, and sets nginx_master again.

bench_hit_load() {
    local d="${BENCH_LOAD_DURATION:-$duration}"
    HIT_LOAD_LINES=("Hits under cold renders (issue 37): disk cache on, memory cache off, ${workers} render workers, ${d} s each; cold: 4 clients, each request a new w:1200 variant of the 12 MP photo")
    restart_kiln --set cache.memory_cost_limit=0 --set "cache.disk_path=$run_dir/cache-load"
    hit_load_measure "without the lookup lane" "$d" plain
    # The lookup lane (server.lookup_workers = 1, nginx/kiln-lookup.conf): nginx sends image
    # requests to the lane, which answers hits and hands misses to the render workers.
    restart_kiln --set cache.memory_cost_limit=0 --set "cache.disk_path=$run_dir/cache-load" --set server.lookup_workers=1
    kiln_stop_nginx "$run_dir" || true
    KILN_NGINX_LOOKUP=1 kiln_write_nginx_conf "$run_dir" "$port" "$run_dir/kiln.sock" "$images"
    kiln_start_nginx "$run_dir" || kiln_die "nginx did not restart with the lookup lane"
    nginx_master="$(cat "$run_dir/nginx.master.pid")"
    hit_load_measure "with the lookup lane (1 lookup worker)" "$d" lane
    # And nginx's front cache in front of the lane (nginx/kiln-front-cache.conf, kept for an hour,
    # reached by purges through purge.nginx_cache): repeats never reach kiln.
    kiln_stop_nginx "$run_dir" || true
    KILN_NGINX_LOOKUP=1 KILN_NGINX_FRONT_CACHE=3600 KILN_NGINX_FRONT_CACHE_DIR="$run_dir/front-load" \
        kiln_write_nginx_conf "$run_dir" "$port" "$run_dir/kiln.sock" "$images"
    kiln_start_nginx "$run_dir" || kiln_die "nginx did not restart with the lane and the front cache"
    nginx_master="$(cat "$run_dir/nginx.master.pid")"
    hit_load_measure "with the lookup lane and nginx's front cache" "$d" front
    kiln_stop_nginx "$run_dir" || true
    kiln_write_nginx_conf "$run_dir" "$port" "$run_dir/kiln.sock" "$images"
    kiln_start_nginx "$run_dir" || kiln_die "nginx did not restart"
    nginx_master="$(cat "$run_dir/nginx.master.pid")"
}

# hit_load_measure LABEL SECONDS TAG: the three measurements against the running kiln and nginx.
hit_load_measure() {
    local label="$1" d="$2" tag="$3" hit="/w:800/q:80/f:jpeg/photo_1920x1080.jpg"
    local lua="$run_dir/cold.lua" logs="$run_dir/logs"
    curl -fsS -o /dev/null "$base$hit" || { kiln_warn "hitload: cannot fetch $hit"; return; }
    local said want=HIT-DISK
    [ "$tag" = front ] && want=HIT-FRONT
    said="$(curl -s -o /dev/null -w '%header{x-cache}' "$base$hit")"
    [ "$said" = "$want" ] || kiln_warn "hitload: $hit is not a $want but $said"
    # A new cache-busting version per request, so each one renders (the cache key holds `cb:`).
    cat >"$lua" <<'LUA'
local counter = 0
id = 0
local nonce = tostring(os.time())
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
function request()
  counter = counter + 1
  return wrk.format("GET", "/cb:" .. nonce .. "t" .. id .. "n" .. counter .. "/w:1200/q:80/f:jpeg/photo_4000x3000.jpg")
end
LUA
    # Beside renders, hits come at a steady rate (BENCH_HIT_DELAY_MS between a hit's answer and
    # the next, 2 ms: at most 500 a second), as a site's traffic does: a client asking without
    # pause would measure the load generator's own CPU (wrk shares the 2 cores) once hits are
    # cheap, not what hits take from renders. The same rate in every configuration.
    local paced="$run_dir/paced.lua"
    printf 'function delay()\n  return %s\nend\n' "${BENCH_HIT_DELAY_MS:-2}" >"$paced"
    local alone cold both_hit both_cold
    alone="$(timeout $((d + 20)) wrk -t1 -c1 -d"${d}s" --timeout 10s --latency "$base$hit" 2>&1)"
    sleep 1  # a new second: a new nonce, so no URL of an earlier run repeats
    cold="$(timeout $((d + 20)) wrk -t2 -c4 -d"${d}s" --timeout 20s -s "$lua" "$base/" 2>&1)"
    sleep 1
    timeout $((d + 20)) wrk -t2 -c4 -d"${d}s" --timeout 20s -s "$lua" "$base/" >"$logs/wrk-hitload-$tag-cold-both.txt" 2>&1 &
    local cold_pid=$!
    both_hit="$(timeout $((d + 20)) wrk -t1 -c1 -d"${d}s" --timeout 10s --latency -s "$paced" "$base$hit" 2>&1)"
    wait "$cold_pid" || kiln_warn "hitload: the cold wrk beside hits failed"
    both_cold="$(cat "$logs/wrk-hitload-$tag-cold-both.txt")"
    printf '%s\n' "$alone" >"$logs/wrk-hitload-$tag-alone.txt"
    printf '%s\n' "$cold" >"$logs/wrk-hitload-$tag-cold.txt"
    printf '%s\n' "$both_hit" >"$logs/wrk-hitload-$tag-hit-both.txt"

    local p50a p99a rpsa p50b p99b rpsb coldr coldb errs
    p50a="$(to_ms "$(awk '$1 == "50%" {print $2; exit}' <<<"$alone")")"
    p99a="$(to_ms "$(awk '$1 == "99%" {print $2; exit}' <<<"$alone")")"
    rpsa="$(awk '/^Requests\/sec:/ {printf "%.0f", $2}' <<<"$alone")"
    p50b="$(to_ms "$(awk '$1 == "50%" {print $2; exit}' <<<"$both_hit")")"
    p99b="$(to_ms "$(awk '$1 == "99%" {print $2; exit}' <<<"$both_hit")")"
    rpsb="$(awk '/^Requests\/sec:/ {printf "%.0f", $2}' <<<"$both_hit")"
    coldr="$(awk '/^Requests\/sec:/ {printf "%.2f", $2}' <<<"$cold")"
    coldb="$(awk '/^Requests\/sec:/ {printf "%.2f", $2}' <<<"$both_cold")"
    errs="$(awk '/Non-2xx or 3xx responses:|Socket errors:/ {print}' <<<"$alone$cold$both_hit$both_cold" | sed 's/^ */ /' | tr -d '\n')"
    HIT_LOAD_LINES+=(
        "  $label"
        "    $([ "$tag" = front ] && echo "front hit" || echo "disk hit ") alone (1 client):        p50 ${p50a:--} ms, p99 ${p99a:--} ms, ${rpsa:--} req/s"
        "    $([ "$tag" = front ] && echo "front hit" || echo "disk hit ") under cold renders:      p50 ${p50b:--} ms, p99 ${p99b:--} ms, ${rpsb:--} req/s (paced; target: p99 <= 5 ms)"
        "    cold renders alone / with hits:   ${coldr:--} / ${coldb:--} req/s = $(awk -v a="${coldb:-0}" -v b="${coldr:-0}" 'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "-"}')x (target >= 0.9)"
    )
    if [ -n "$errs" ]; then HIT_LOAD_LINES+=("    errors:$errs"); fi
}
