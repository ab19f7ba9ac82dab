# shellcheck shell=bash
# Sourced by scripts/bench: the disk cache at scale (issue 15). Needs from scripts/bench:
# run_dir, images, base, URL[op2], restart_kiln, to_ms, KILN_BIN.
#
# - `kiln cache fill` writes BENCH_CACHE_ENTRIES (default 1,000,000) synthetic entries of
#   BENCH_CACHE_ENTRY_SIZE (default 3000 bytes: one 4 KiB block each, about 4 GB in all) instead of a
#   million renders; another cache gets 1,000.
# - Disk hits of the op2 variant (memory cache off) in each, interleaved, 3 rounds: p50 and p99.
# - `kiln cache stats` on the large cache.
# - A sweep of 100,000 evictions at nice 19 (how the workers' background sweep runs), with
#   disk hits measured during it against the same measurement without it.

# wrk for $2 seconds on $1; prints "p50 p99 max requests" in ms.
cache_scale_wrk() {
    local out
    out="$(timeout $(($2 + 20)) wrk -t1 -c2 -d"$2s" --timeout 10s --latency "$1" 2>&1)" || true
    printf '%s\n' "$out" >>"$run_dir/logs/wrk-cachescale.txt"
    printf '%s %s %s %s\n' \
        "$(to_ms "$(awk '$1 == "50%" {print $2; exit}' <<<"$out")")" \
        "$(to_ms "$(awk '$1 == "99%" {print $2; exit}' <<<"$out")")" \
        "$(to_ms "$(awk '$1 == "Latency" {print $4; exit}' <<<"$out")")" \
        "$(awk '/requests in/ {print $1; exit}' <<<"$out")"
}

median3() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

bench_cache_scale() {
    # BENCH_CACHE_DIR: where the caches go (default: beside the run folder; /dev/shm measures the sweep
    # without the disk: on this VM's ext4, mounted with `discard`, an unlink costs milliseconds).
    local where="${BENCH_CACHE_DIR:-$(dirname "$run_dir")}"
    local big="$where/kiln-cache-big.$$" small="$where/kiln-cache-small.$$" n="${BENCH_CACHE_ENTRIES:-1000000}"
    local fs
    mkdir -p "$where"
    fs="$(findmnt -no FSTYPE,OPTIONS -T "$where" 2>/dev/null | head -n 1 | cut -c1-60)"
    local size="${BENCH_CACHE_ENTRY_SIZE:-3000}" limit=$((1 << 40)) url="$base${URL[op2]}"
    local fill_s stats_s t0 t1 r
    kiln_log "cache scale: filling $n synthetic entries (kiln cache fill)"
    t0="$(date +%s.%N)"
    "$KILN_BIN" cache fill --entries "$n" --size "$size" --spread 30d --set "cache.disk_path=$big" >/dev/null \
        || { kiln_warn "kiln cache fill failed"; return; }
    t1="$(date +%s.%N)"
    fill_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", b - a}')"
    "$KILN_BIN" cache fill --entries 1000 --size "$size" --spread 30d --set "cache.disk_path=$small" >/dev/null

    local -a p50_small p99_small p50_big p99_big
    for round in 1 2 3; do
        for which in small big; do
            local dir="$small"; [ "$which" = big ] && dir="$big"
            restart_kiln --set cache.memory_cost_limit=0 --set "cache.disk_path=$dir" --set "cache.disk_size_limit=$limit"
            curl -fsS -o /dev/null "$url" || kiln_warn "cache scale: GET ${URL[op2]} failed"
            read -r p50 p99 _ _ <<<"$(cache_scale_wrk "$url" "${BENCH_CACHE_DURATION:-5}")"
            if [ "$which" = small ]; then p50_small+=("$p50"); p99_small+=("$p99"); else p50_big+=("$p50"); p99_big+=("$p99"); fi
        done
    done

    t0="$(date +%s.%N)"
    "$KILN_BIN" cache stats --set "cache.disk_path=$big" >"$run_dir/logs/cache-stats.txt" 2>&1
    t1="$(date +%s.%N)"
    stats_s="$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')"

    # A limit just under the total: the sweep evicts down to low water (0.9 of it), a tenth of the
    # entries: 100,000 of a million.
    local entries bytes block sweep_limit base_line during sweep_out sweep_pid
    entries="$(awk '/entries:/ {gsub(",", "", $2); print $2; exit}' "$run_dir/logs/cache-stats.txt")"
    bytes="$("$KILN_BIN" cache stats --json --set "cache.disk_path=$big" | python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes"])')"
    block=$((bytes / entries))
    sweep_limit=$((bytes - block))
    restart_kiln --set cache.memory_cost_limit=0 --set "cache.disk_path=$big" --set "cache.disk_size_limit=$limit"
    curl -fsS -o /dev/null "$url" || true
    base_line="$(cache_scale_wrk "$url" 8)"
    /usr/bin/time -f "%e s wall, %U s user + %S s system CPU, peak RSS %M KB" -o "$run_dir/logs/cache-sweep-time.txt" \
        nice -n 19 "$KILN_BIN" cache sweep --set "cache.disk_path=$big" --set "cache.disk_size_limit=$sweep_limit" \
        >"$run_dir/logs/cache-sweep.txt" 2>&1 &
    sweep_pid=$!
    during="$(cache_scale_wrk "$url" 8)"
    wait "$sweep_pid" || kiln_warn "kiln cache sweep failed: $(cat "$run_dir/logs/cache-sweep.txt")"
    sweep_out="$(cat "$run_dir/logs/cache-sweep.txt")"

    local m50s m99s m50b m99b
    m50s="$(median3 "${p50_small[@]}")"; m99s="$(median3 "${p99_small[@]}")"
    m50b="$(median3 "${p50_big[@]}")"; m99b="$(median3 "${p99_big[@]}")"
    read -r b50 b99 bmax breq <<<"$base_line"
    read -r d50 d99 dmax dreq <<<"$during"
    CACHE_SCALE_LINES=(
        "Disk cache at scale: $entries synthetic entries of $size bytes in $where ($fs; kiln cache fill: ${fill_s} s), op2 disk hits, wrk -c2, median of 3 interleaved runs"
        "$(printf '  %-34s %8s %8s' "" "p50 ms" "p99 ms")"
        "$(printf '  %-34s %8s %8s' "1,000 entries" "$m50s" "$m99s")"
        "$(printf '  %-34s %8s %8s' "$entries entries" "$m50b" "$m99b")"
        "  p99 at $entries / p99 at 1,000: $(awk -v a="$m99b" -v b="$m99s" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')x (target <= 1.10)"
        "  kiln cache stats on $entries entries: ${stats_s} s"
        "  sweep at nice 19 (as the workers' background sweep): ${sweep_out:-failed}"
        "    $(cat "$run_dir/logs/cache-sweep-time.txt" 2>/dev/null)"
        "  disk hits during its first 8 s: p50 $d50 ms, p99 $d99 ms, max $dmax ms ($dreq requests); without it: p50 $b50, p99 $b99, max $bmax ($breq)"
    )
    # A million unlinks take minutes on some disks: removed in the background, after the bench.
    kiln_log "cache scale: removing the synthetic entries in the background"
    (nohup rm -rf "$big" "$small" >/dev/null 2>&1 &)
}
