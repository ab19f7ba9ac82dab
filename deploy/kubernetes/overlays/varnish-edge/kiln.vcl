# overlays/varnish-edge: the repository's varnish/kiln.vcl with only the backend (the Service
# kiln) and the two ACLs (the pod network, 10.244.0.0/16 here: yours) changed;
# Tests/integration/test_kubernetes.py checks that nothing else differs.
# Kiln's edge cache: Varnish 7.1 with vmod-xkey (Debian: `apt-get install varnish
# varnish-modules`) in front of the nginx that serves Kiln (nginx/kiln.conf for one host,
# nginx/kiln-hosts.conf for a fleet on a ring).
#
#   client --> Varnish :80 --HTTP--> nginx :8080 --FastCGI--> kiln serve (one or several hosts)
#
# Run it with, for example:
#
#   varnishd -a :80 -f /etc/varnish/kiln.vcl -s malloc,2g
#
# (Debian: copy this file to /etc/varnish/default.vcl, or point varnish.service's `-f` at it.)
#
# What it does:
# - caches every image answer for as long as Kiln's `Cache-Control` says (`http.cache_control`,
#   a year by default); errors (`no-store`) are never kept, fallback images for their short
#   `max-age` (`fallback.max_age`);
# - files each answer under the surrogate keys Kiln sends in `xkey` (`http.xkey`: the source's
#   tag `kiln-src-<hex>` and `kiln-preset-<name>` per preset), so one request drops every
#   variant of a source, whatever its URL, size or format:
#
#       curl -X PURGE -H 'xkey: kiln-src-<hex>' http://varnish/      -> 200, "purged 7 objects"
#
#   `kiln cache purge --source <path>` sends exactly that to every edge of `purge.varnish`
#   (`kiln-src-<hex>` is `SourceTag`: the same for a path on every host and command). A plain
#   `PURGE /<url>` drops that one URL (every Accept variant of it);
# - `PURGE` only from the `purgers` ACL below (others: 403);
# - `f:auto` answers carry `Vary: Accept`: the `Accept` header is reduced to the few classes Kiln
#   tells apart (AVIF and WebP, WebP only, neither) before the lookup, so browsers share one
#   object per class instead of one per Accept spelling; the Client Hints, Save-Data, ECT and
#   `Origin` are reduced the same way (`kiln_normalize_hints`, generated from Kiln's declared
#   request inputs by `kiln config vcl`: run it again and replace that block when
#   `http.hint_widths` or `http.allow_origin` differ from their defaults);
# - the surrogate-key headers (`xkey`, `Surrogate-Key`, `Cache-Tag`) are stripped from the
#   answers to clients: they are for caches, not browsers. When a CDN sits in front of this
#   Varnish and purges by `Surrogate-Key` or `Cache-Tag`, delete those two `unset` lines in
#   vcl_deliver;
# - `X-Cache-Edge: HIT` / `MISS` / `PASS` says whether this Varnish answered by itself (Kiln's
#   own `X-Cache` is the one it wrote when the object was fetched).
#
# Edit the backend (where nginx listens) and the two ACLs; nothing else needs changing.
# `varnishd -C -f kiln.vcl` compiles it without starting anything.

vcl 4.1;

import std;
import xkey;

# nginx in front of Kiln. Several nginx (each with the same ring): use vmod_directors'
# round_robin, or one Varnish per nginx.
backend nginx {
    .host = "kiln";
    .port = "80";
    .connect_timeout = 2s;
    .first_byte_timeout = 60s;
    .between_bytes_timeout = 30s;
}

# Who may send PURGE: the hosts that run `kiln cache purge` (or the CMS hook). Addresses only.
acl purgers {
    "10.244.0.0"/16;
    "127.0.0.1";
    "::1";
}

# Who may read Kiln's /_kiln/metrics and /_kiln/status through this Varnish (nginx allows only
# local addresses, and every request from Varnish is local to it).
acl monitors {
    "10.244.0.0"/16;
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "PURGE not allowed from " + client.ip));
        }
        if (req.http.xkey) {
            # Every object filed under any of the keys (space- or comma-separated).
            set req.http.kiln-purged = xkey.purge(req.http.xkey);
            return (synth(200, "purged " + req.http.kiln-purged + " objects"));
        }
        return (purge);
    }
    if (req.url ~ "^/_kiln/") {
        if (req.url !~ "^/_kiln/health(\?|$)" && client.ip !~ monitors) {
            return (synth(403, "forbidden"));
        }
        return (pass);
    }
    if (req.method != "GET" && req.method != "HEAD") {
        # Kiln answers 405 itself.
        return (pass);
    }
    # Images depend on the path, Accept and Client Hints, never on cookies: a site's cookies
    # must not turn every image into a pass (the built-in vcl_recv passes requests with them).
    unset req.http.Cookie;
    call kiln_normalize_accept;
    call kiln_normalize_hints;
    # The built-in vcl_recv runs next (it passes requests with Authorization, for example).
}

# `Accept` reduced to what Kiln's f:auto reads (`FormatNegotiation`): AVIF by an exact
# `image/avif` entry, WebP by `image/webp` or else `image/*`, an entry with q=0 refusing it;
# `*/*` alone is neither. Every request gets one of four values, so `Vary: Accept` keeps at
# most four objects per f:auto URL.
sub kiln_normalize_accept {
    set req.http.kiln-accept = "";
    if (req.http.Accept ~ "(?i)(^|,)\s*image/avif\s*(;|,|$)"
        && req.http.Accept !~ "(?i)(^|,)\s*image/avif\s*;[^,]*\bq\s*=\s*0(\.0*)?\s*(;|,|$)") {
        set req.http.kiln-accept = "image/avif,";
    }
    if (req.http.Accept ~ "(?i)(^|,)\s*image/webp\s*(;|,|$)") {
        if (req.http.Accept !~ "(?i)(^|,)\s*image/webp\s*;[^,]*\bq\s*=\s*0(\.0*)?\s*(;|,|$)") {
            set req.http.kiln-accept = req.http.kiln-accept + "image/webp,";
        }
    } elsif (req.http.Accept ~ "(?i)(^|,)\s*image/\*\s*(;|,|$)"
             && req.http.Accept !~ "(?i)(^|,)\s*image/\*\s*;[^,]*\bq\s*=\s*0(\.0*)?\s*(;|,|$)") {
        set req.http.kiln-accept = req.http.kiln-accept + "image/webp,";
    }
    set req.http.Accept = req.http.kiln-accept + "*/*";
    unset req.http.kiln-accept;
}

# generated: EdgeRecipe (kiln config vcl; KILN_DOCS_UPDATE=1 swift test --filter EdgeRecipe)
# Generated by `kiln config vcl` from Kiln's request inputs (http.hint_widths = [320, 640, 960, 1280, 1920], http.allow_origin = []).
# Each header Kiln varies on is reduced to the classes Kiln tells apart, so an edge keeps
# one object per answer, not one per header spelling.
sub kiln_normalize_hints {
    if (!req.http.Sec-CH-Width && req.http.Width) {
        set req.http.Sec-CH-Width = req.http.Width;
    }
    unset req.http.Width;
    if (req.http.Sec-CH-Width) {
        set req.http.kiln-n = regsub(req.http.Sec-CH-Width, "^[ \t]*([0-9]{1,9})[ \t]*$", "\1");
        if (req.http.kiln-n !~ "^[0-9]{1,9}$" || std.integer(req.http.kiln-n, 0) < 1) {
            unset req.http.Sec-CH-Width;
        } elsif (std.integer(req.http.kiln-n, 0) <= 320) {
            set req.http.Sec-CH-Width = "320";
        } elsif (std.integer(req.http.kiln-n, 0) <= 640) {
            set req.http.Sec-CH-Width = "640";
        } elsif (std.integer(req.http.kiln-n, 0) <= 960) {
            set req.http.Sec-CH-Width = "960";
        } elsif (std.integer(req.http.kiln-n, 0) <= 1280) {
            set req.http.Sec-CH-Width = "1280";
        } elsif (std.integer(req.http.kiln-n, 0) <= 1920) {
            set req.http.Sec-CH-Width = "1920";
        } else {
            set req.http.Sec-CH-Width = "1920";
        }
    }
    if (!req.http.Sec-CH-DPR && req.http.DPR) {
        set req.http.Sec-CH-DPR = req.http.DPR;
    }
    unset req.http.DPR;
    if (req.http.Sec-CH-DPR) {
        set req.http.kiln-n = regsub(req.http.Sec-CH-DPR, "^[ \t]*([0-9]{1,14}(\.[0-9]{1,14})?)[ \t]*$", "\1");
        if (req.http.kiln-n !~ "^[0-9]+(\.[0-9]+)?$" || req.http.kiln-n ~ "^.{17}"
            || std.real(req.http.kiln-n, 0.0) <= 0.0) {
            unset req.http.Sec-CH-DPR;
        } elsif (std.real(req.http.kiln-n, 0.0) * 2 <= 2.001) {
            unset req.http.Sec-CH-DPR;
        } elsif (std.real(req.http.kiln-n, 0.0) * 2 <= 3.001) {
            set req.http.Sec-CH-DPR = "1.5";
        } elsif (std.real(req.http.kiln-n, 0.0) * 2 <= 4.001) {
            set req.http.Sec-CH-DPR = "2";
        } elsif (std.real(req.http.kiln-n, 0.0) * 2 <= 5.001) {
            set req.http.Sec-CH-DPR = "2.5";
        } elsif (std.real(req.http.kiln-n, 0.0) * 2 <= 6.001) {
            set req.http.Sec-CH-DPR = "3";
        } elsif (std.real(req.http.kiln-n, 0.0) * 2 <= 7.001) {
            set req.http.Sec-CH-DPR = "3.5";
        } else {
            set req.http.Sec-CH-DPR = "4";
        }
    }
    if (req.http.Sec-CH-Width) {
        # A slot width decides; the viewport is not read.
        unset req.http.Sec-CH-Viewport-Width;
        unset req.http.Viewport-Width;
    }
    if (!req.http.Sec-CH-Viewport-Width && req.http.Viewport-Width) {
        set req.http.Sec-CH-Viewport-Width = req.http.Viewport-Width;
    }
    unset req.http.Viewport-Width;
    if (req.http.Sec-CH-Viewport-Width) {
        set req.http.kiln-n = regsub(req.http.Sec-CH-Viewport-Width, "^[ \t]*([0-9]{1,9})[ \t]*$", "\1");
        if (req.http.Sec-CH-DPR) {
            set req.http.kiln-r = req.http.Sec-CH-DPR;
        } else {
            set req.http.kiln-r = "1";
        }
        if (req.http.kiln-n !~ "^[0-9]{1,9}$" || std.integer(req.http.kiln-n, 0) < 1) {
            unset req.http.Sec-CH-Viewport-Width;
        } elsif (req.url !~ "(?i)(^|/)(dpr|pr|preset)(:|%3a)") {
            # The ratio is the hint's (or 1), as the URL names none of its own: the slot
            # width Kiln derives (viewport × ratio, snapped up) is known here.
            if (std.real(req.http.kiln-n, 0.0) * std.real(req.http.kiln-r, 1.0) <= 320) {
                set req.http.Sec-CH-Width = "320";
            } elsif (std.real(req.http.kiln-n, 0.0) * std.real(req.http.kiln-r, 1.0) <= 640) {
                set req.http.Sec-CH-Width = "640";
            } elsif (std.real(req.http.kiln-n, 0.0) * std.real(req.http.kiln-r, 1.0) <= 960) {
                set req.http.Sec-CH-Width = "960";
            } elsif (std.real(req.http.kiln-n, 0.0) * std.real(req.http.kiln-r, 1.0) <= 1280) {
                set req.http.Sec-CH-Width = "1280";
            } elsif (std.real(req.http.kiln-n, 0.0) * std.real(req.http.kiln-r, 1.0) <= 1920) {
                set req.http.Sec-CH-Width = "1920";
            } else {
                set req.http.Sec-CH-Width = "1920";
            }
            unset req.http.Sec-CH-Viewport-Width;
        } else {
            # A `dpr:` or a preset in the URL: the viewport's class for every ratio.
            if (std.integer(req.http.kiln-n, 0) <= 80) {
                set req.http.Sec-CH-Viewport-Width = "80";
            } elsif (std.integer(req.http.kiln-n, 0) <= 91) {
                set req.http.Sec-CH-Viewport-Width = "91";
            } elsif (std.integer(req.http.kiln-n, 0) <= 106) {
                set req.http.Sec-CH-Viewport-Width = "106";
            } elsif (std.integer(req.http.kiln-n, 0) <= 128) {
                set req.http.Sec-CH-Viewport-Width = "128";
            } elsif (std.integer(req.http.kiln-n, 0) <= 160) {
                set req.http.Sec-CH-Viewport-Width = "160";
            } elsif (std.integer(req.http.kiln-n, 0) <= 182) {
                set req.http.Sec-CH-Viewport-Width = "182";
            } elsif (std.integer(req.http.kiln-n, 0) <= 213) {
                set req.http.Sec-CH-Viewport-Width = "213";
            } elsif (std.integer(req.http.kiln-n, 0) <= 240) {
                set req.http.Sec-CH-Viewport-Width = "240";
            } elsif (std.integer(req.http.kiln-n, 0) <= 256) {
                set req.http.Sec-CH-Viewport-Width = "256";
            } elsif (std.integer(req.http.kiln-n, 0) <= 274) {
                set req.http.Sec-CH-Viewport-Width = "274";
            } elsif (std.integer(req.http.kiln-n, 0) <= 320) {
                set req.http.Sec-CH-Viewport-Width = "320";
            } elsif (std.integer(req.http.kiln-n, 0) <= 365) {
                set req.http.Sec-CH-Viewport-Width = "365";
            } elsif (std.integer(req.http.kiln-n, 0) <= 384) {
                set req.http.Sec-CH-Viewport-Width = "384";
            } elsif (std.integer(req.http.kiln-n, 0) <= 426) {
                set req.http.Sec-CH-Viewport-Width = "426";
            } elsif (std.integer(req.http.kiln-n, 0) <= 480) {
                set req.http.Sec-CH-Viewport-Width = "480";
            } elsif (std.integer(req.http.kiln-n, 0) <= 512) {
                set req.http.Sec-CH-Viewport-Width = "512";
            } elsif (std.integer(req.http.kiln-n, 0) <= 548) {
                set req.http.Sec-CH-Viewport-Width = "548";
            } elsif (std.integer(req.http.kiln-n, 0) <= 640) {
                set req.http.Sec-CH-Viewport-Width = "640";
            } elsif (std.integer(req.http.kiln-n, 0) <= 768) {
                set req.http.Sec-CH-Viewport-Width = "768";
            } elsif (std.integer(req.http.kiln-n, 0) <= 853) {
                set req.http.Sec-CH-Viewport-Width = "853";
            } elsif (std.integer(req.http.kiln-n, 0) <= 960) {
                set req.http.Sec-CH-Viewport-Width = "960";
            } elsif (std.integer(req.http.kiln-n, 0) <= 1280) {
                set req.http.Sec-CH-Viewport-Width = "1280";
            } elsif (std.integer(req.http.kiln-n, 0) <= 1920) {
                set req.http.Sec-CH-Viewport-Width = "1920";
            } else {
                set req.http.Sec-CH-Viewport-Width = "1921";
            }
        }
    }
    if (!req.http.Sec-CH-Width && !req.http.Sec-CH-Viewport-Width) {
        # No usable hint: Kiln's default width, one object with the hinted 960.
        set req.http.Sec-CH-Width = "960";
    }
    if (req.http.Save-Data ~ "(?i)^;*[ \t]*on[ \t]*(;|$)") {
        set req.http.Save-Data = "on";
    } else {
        unset req.http.Save-Data;
    }
    if (req.http.ECT ~ "(?i)^[ \t]*(slow-)?2g[ \t]*$") {
        set req.http.ECT = "2g";
    } else {
        unset req.http.ECT;
    }
    # `http.allow_origin` is empty or `*`: the answer does not depend on `Origin`.
    unset req.http.Origin;
    unset req.http.kiln-n;
    unset req.http.kiln-r;
}
# end generated: EdgeRecipe

sub vcl_purge {
    return (synth(200, "purged " + req.url));
}

sub vcl_synth {
    # One line of text, like Kiln's own answers (purge counts, refusals).
    set resp.http.Content-Type = "text/plain; charset=utf-8";
    set resp.http.Cache-Control = "no-store";
    set resp.body = resp.reason + {"
"};
    return (deliver);
}

sub vcl_backend_response {
    # Kiln's Cache-Control decides (the built-in vcl_backend_response reads it: `no-store`
    # answers are not kept, `max-age` is the TTL). A Kiln host that is restarting or shedding
    # load answers 503 with `Retry-After`: never kept.
    if (beresp.status >= 500) {
        set beresp.uncacheable = true;
        set beresp.ttl = 0s;
        return (deliver);
    }
    # A fallback image (`Kiln-Fallback`, `fallback.max_age`) lives no longer than its max-age:
    # no grace, so a placeholder is never answered past it, even while the backend is down.
    if (beresp.http.Kiln-Fallback) {
        set beresp.grace = 0s;
        set beresp.keep = 0s;
        return (deliver);
    }
    # After the TTL, an object may still be answered while one request revalidates it
    # (Kiln answers the If-None-Match with a 304 from its caches, without rendering).
    set beresp.grace = 1h;
    set beresp.keep = 1d;
}

sub vcl_deliver {
    if (obj.uncacheable) {
        set resp.http.X-Cache-Edge = "PASS";
    } elsif (obj.hits > 0) {
        set resp.http.X-Cache-Edge = "HIT";
    } else {
        set resp.http.X-Cache-Edge = "MISS";
    }
    # The tags stay on the stored object (xkey reads them there); clients do not need them.
    unset resp.http.xkey;
    unset resp.http.Surrogate-Key;
    unset resp.http.Cache-Tag;
}
