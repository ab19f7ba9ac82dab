// Kiln's demo page (scripts/run). Plain JavaScript, no build step, no libraries.
//
// It lists the images of the served folder (nginx's JSON listing at /_demo/images/), builds a
// kiln URL from the options typed or picked, fetches it (same origin, so every response header
// is readable), shows the image from the response body and the response's size, Content-Type,
// X-Cache and Server-Timing phases. With signing on (KILN_DEMO_SIGN=1 scripts/run) it signs each
// URL in the browser with the DEMO-ONLY key of /_demo/config.json: imgproxy's scheme, as in
// docs/security.md, "Signed URLs" (base64url(HMAC-SHA256(key, salt + path)), without padding).
"use strict";

const IMAGE_TYPES = /\.(jpe?g|png|webp)$/i;
const LIST_LIMIT = 200;      // images listed at most
const LIST_DEPTH = 2;        // sub-folders followed
const HISTORY_ROWS = 8;

const $ = (id) => document.getElementById(id);
const state = { config: { signing: null, presets: {} }, hmacKey: null, salt: null, seq: 0, count: 0, timer: 0 };

// ---- URLs and signing ------------------------------------------------------------------

function encodePath(path) {
  return path.split("/").filter((s) => s !== "").map(encodeURIComponent).join("/");
}

// "/<options>/<source>": a `-` ends the options when the source's first segment could be read
// as an option (a word, or a name with a colon).
function kilnPath(spec, source) {
  const options = spec.trim().split("/").filter((s) => s !== "");
  const src = encodePath(source);
  const first = source.split("/").filter((s) => s !== "")[0] || "";
  if (options.length > 0 && (first.includes(":") || /^[a-z]+$/.test(first))) options.push("-");
  return "/" + options.concat(src ? [src] : []).join("/");
}

function hexBytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

function base64url(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function setUpSigning() {
  const signing = state.config.signing;
  if (!signing) return;
  if (!(window.crypto && crypto.subtle)) {
    throw new Error("this browser gives no WebCrypto here (open the page as http://127.0.0.1 or localhost)");
  }
  state.hmacKey = await crypto.subtle.importKey("raw", hexBytes(signing.key),
    { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  state.salt = hexBytes(signing.salt);
}

// The URL as requested: the path itself, or /<signature><path> with signing on.
async function requestPath(path) {
  if (!state.hmacKey) return path;
  const body = new TextEncoder().encode(path);
  const message = new Uint8Array(state.salt.length + body.length);
  message.set(state.salt, 0);
  message.set(body, state.salt.length);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", state.hmacKey, message));
  return "/" + base64url(mac.slice(0, state.config.signing.size || 32)) + path;
}

// ---- the image list ----------------------------------------------------------------------

async function listFolder(dir, depth, found) {
  const r = await fetch("/_demo/images/" + (dir ? encodePath(dir) + "/" : ""), { cache: "no-store" });
  if (!r.ok) throw new Error(`listing /${dir} failed: ${r.status}`);
  const entries = await r.json();
  for (const e of entries) {
    if (found.length >= LIST_LIMIT) return;
    const path = dir ? dir + "/" + e.name : e.name;
    if (e.type === "file" && IMAGE_TYPES.test(e.name)) found.push({ path, size: e.size });
  }
  if (depth >= LIST_DEPTH) return;
  for (const e of entries) {
    if (e.type === "directory" && !e.name.startsWith(".")) {
      await listFolder(dir ? dir + "/" + e.name : e.name, depth + 1, found);
    }
  }
}

async function showImageList() {
  const found = [];
  try {
    await listFolder("", 0, found);
  } catch (e) {
    $("list-error").textContent = e.message + " (type a source path instead)";
    $("list-error").hidden = false;
  }
  const list = $("image-list");
  list.replaceChildren();
  for (const img of found) {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.path = img.path;
    const thumb = document.createElement("img");
    thumb.alt = "";
    thumb.loading = "lazy";
    thumb.src = await requestPath(kilnPath("rs:112:80:fill/f:webp", img.path));
    const label = document.createElement("span");
    label.textContent = `${img.path} (${formatBytes(img.size)})`;
    button.append(thumb, label);
    button.addEventListener("click", () => { selectSource(img.path); render(); });
    li.append(button);
    list.append(li);
  }
  if (found.length === 0 && $("list-error").hidden) {
    $("list-error").textContent = "no JPEG, PNG or WebP files in the folder";
    $("list-error").hidden = false;
  }
  return found;
}

function selectSource(path) {
  $("source").value = path;
  for (const b of document.querySelectorAll("#image-list button")) {
    b.classList.toggle("selected", b.dataset.path === path);
  }
}

// ---- controls -> options -------------------------------------------------------------------

function specFromControls() {
  const parts = [];
  const preset = $("c-preset").value;
  if (preset) parts.push("pr:" + preset);
  const w = parseInt($("c-w").value, 10) || 0;
  const h = parseInt($("c-h").value, 10) || 0;
  if (w > 0 || h > 0) parts.push(`rs:${w}:${h}:${$("c-mode").value}`);
  const blur = parseFloat($("c-blur").value);
  if (blur > 0) parts.push("bl:" + blur);
  const q = parseInt($("c-q").value, 10);
  if (q) parts.push("q:" + q);
  if ($("c-format").value) parts.push("f:" + $("c-format").value);
  return parts.join("/");
}

// Typed options -> controls (what they can show; the typed text stays as it is).
function controlsFromSpec(spec) {
  const set = { "c-w": "", "c-h": "", "c-mode": "fit", "c-format": "", "c-q": "", "c-blur": "", "c-preset": "" };
  for (const part of spec.split("/")) {
    const [name, ...args] = part.trim().split(":");
    if ((name === "rs" || name === "resize") && args.length >= 2) {
      set["c-w"] = args[0];
      set["c-h"] = args[1];
      if (["fit", "fill", "force"].includes(args[2])) set["c-mode"] = args[2];
    } else if ((name === "w" || name === "width") && args.length === 1) {
      set["c-w"] = args[0];
    } else if ((name === "h" || name === "height") && args.length === 1) {
      set["c-h"] = args[0];
    } else if ((name === "f" || name === "format") && args.length === 1) {
      set["c-format"] = args[0];
    } else if ((name === "q" || name === "quality") && args.length === 1) {
      set["c-q"] = args[0];
    } else if ((name === "bl" || name === "blur") && args.length === 1) {
      set["c-blur"] = args[0];
    } else if ((name === "pr" || name === "preset") && args.length === 1) {
      set["c-preset"] = args[0];
    }
  }
  for (const [id, value] of Object.entries(set)) {
    const el = $(id);
    if (el.tagName === "SELECT" && ![...el.options].some((o) => o.value === value)) continue;
    el.value = value;
  }
}

function renderSoon(ms = 350) {
  clearTimeout(state.timer);
  state.timer = setTimeout(render, ms);
}

// ---- rendering ---------------------------------------------------------------------------------

function formatBytes(n) {
  if (n == null || isNaN(n)) return "—";
  if (n < 1024) return n + " B";
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KiB (" + n.toLocaleString("en") + " B)";
  return (n / 1024 / 1024).toFixed(2) + " MiB (" + n.toLocaleString("en") + " B)";
}

// "spec;dur=0.07, decode;dur=13.28, total;dur=56.25" -> [{name, dur}]
function parseServerTiming(header) {
  if (!header) return [];
  return header.split(",").map((entry) => {
    const [name, ...params] = entry.split(";").map((s) => s.trim());
    let dur = 0;
    for (const p of params) {
      const m = /^dur=([0-9.]+)$/.exec(p);
      if (m) dur = parseFloat(m[1]);
    }
    return { name, dur };
  }).filter((t) => t.name);
}

function showTiming(timings) {
  const chart = $("timing");
  chart.replaceChildren();
  const total = timings.find((t) => t.name === "total");
  const phases = timings.filter((t) => t.name !== "total");
  const max = Math.max(0, ...phases.map((t) => t.dur));
  const sum = phases.reduce((a, t) => a + t.dur, 0);
  $("f-total").textContent = timings.length ? `total ${(total ? total.dur : sum).toFixed(2)} ms` : "(none)";
  for (const t of phases) {
    const row = document.createElement("div");
    row.className = "phase";
    row.dataset.name = t.name;
    row.dataset.dur = String(t.dur);
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = t.name;
    const track = document.createElement("span");
    track.className = "track";
    const bar = document.createElement("span");
    bar.className = "bar";
    // Bars are scaled to the longest phase; a phase that took any time stays visible (2 px).
    const pct = max > 0 ? (t.dur / max) * 100 : 0;
    bar.style.width = t.dur > 0 ? `max(2px, ${pct.toFixed(3)}%)` : "0";
    track.append(bar);
    const ms = document.createElement("span");
    ms.className = "ms";
    ms.textContent = t.dur.toFixed(2) + " ms";
    row.append(name, track, ms);
    chart.append(row);
  }
}

function addHistory(entry) {
  const tbody = document.querySelector("#history tbody");
  const tr = document.createElement("tr");
  tr.className = entry.ok ? "ok" : "failed";
  const cells = [entry.n, entry.status, entry.url, formatBytes(entry.bytes), entry.type || "—",
    entry.cache || "—", entry.total == null ? "—" : entry.total.toFixed(2) + " ms"];
  for (const c of cells) {
    const td = document.createElement("td");
    td.textContent = String(c);
    tr.append(td);
  }
  tbody.prepend(tr);
  while (tbody.rows.length > HISTORY_ROWS) tbody.deleteRow(tbody.rows.length - 1);
}

async function render() {
  clearTimeout(state.timer);
  const seq = ++state.seq;
  const source = $("source").value.trim();
  const result = $("result");
  if (!source) return;
  const path = kilnPath($("spec").value, source);
  const url = await requestPath(path);
  if (seq !== state.seq) return;   // a newer request started meanwhile
  $("url").textContent = path;
  $("url").href = url;
  $("signed-row").hidden = url === path;
  $("signed-url").textContent = url;
  $("signed-url").href = url;
  result.dataset.state = "loading";
  result.dataset.url = url;

  const started = performance.now();
  let response, body;
  try {
    // no-store: every request reaches nginx and kiln (X-Cache shows kiln's caches, not the browser's).
    response = await fetch(url, { cache: "no-store" });
    body = await response.blob();
  } catch (e) {
    if (seq !== state.seq) return;
    showError(`request failed: ${e.message}`, null, url);
    return;
  }
  if (seq !== state.seq) return;
  const elapsed = performance.now() - started;
  const type = response.headers.get("Content-Type") || "";
  const timings = parseServerTiming(response.headers.get("Server-Timing"));
  const total = timings.find((t) => t.name === "total");
  const cache = response.headers.get("X-Cache");
  $("f-status").textContent = `${response.status} ${response.statusText}`;
  $("f-bytes").textContent = formatBytes(body.size);
  $("f-bytes").dataset.bytes = String(body.size);
  $("f-type").textContent = type || "—";
  $("f-cache").textContent = cache || "—";
  $("f-client").textContent = elapsed.toFixed(1) + " ms";
  showTiming(timings);
  const entry = { n: ++state.count, status: response.status, url, bytes: body.size, type, cache,
    total: total ? total.dur : null, ok: response.ok };

  if (!response.ok || !type.startsWith("image/")) {
    const text = (await body.text()).trim();
    if (seq !== state.seq) return;
    addHistory(entry);
    showError(text.length > 400 ? text.slice(0, 400) + "…" : text, response.status, url);
    return;
  }
  const img = $("result-img");
  const objectURL = URL.createObjectURL(body);
  img.onload = () => {
    if (seq !== state.seq) return;
    $("f-pixels").textContent = `${img.naturalWidth} × ${img.naturalHeight}`;
    $("error").hidden = true;
    img.hidden = false;
    result.dataset.state = "done";
  };
  img.onerror = () => {
    if (seq !== state.seq) return;
    showError(`the browser could not show this ${type} (${body.size} bytes)`, response.status, url);
  };
  if (img.dataset.objectUrl) URL.revokeObjectURL(img.dataset.objectUrl);
  img.dataset.objectUrl = objectURL;
  img.src = objectURL;
  addHistory(entry);
}

function showError(text, status, url) {
  $("error").textContent = text;
  $("error").hidden = false;
  $("result-img").hidden = true;
  $("f-pixels").textContent = "—";
  if (status == null) {
    for (const id of ["f-status", "f-bytes", "f-type", "f-cache", "f-client"]) $(id).textContent = "—";
    showTiming([]);
  }
  $("result").dataset.state = "error";
  $("result").dataset.url = url;
}

// ---- start -------------------------------------------------------------------------------------

async function start() {
  try {
    const r = await fetch("/_demo/config.json", { cache: "no-store" });
    if (r.ok) state.config = Object.assign(state.config, await r.json());
  } catch (e) {
    // No config: unsigned, no presets.
  }
  const badge = $("signing-badge");
  try {
    await setUpSigning();
    badge.textContent = state.hmacKey ? "signed URLs (demo key)" : "unsigned URLs";
    badge.classList.toggle("on", Boolean(state.hmacKey));
  } catch (e) {
    badge.textContent = "signing unavailable: " + e.message;
    badge.classList.add("bad");
  }
  for (const [name, chain] of Object.entries(state.config.presets || {})) {
    const o = document.createElement("option");
    o.value = name;
    o.textContent = `${name} (${chain})`;
    $("c-preset").append(o);
  }

  $("spec-form").addEventListener("submit", (e) => { e.preventDefault(); render(); });
  $("spec").addEventListener("input", () => { controlsFromSpec($("spec").value); renderSoon(); });
  $("source").addEventListener("change", () => { selectSource($("source").value.trim()); render(); });
  for (const id of ["c-w", "c-h", "c-mode", "c-format", "c-q", "c-blur", "c-preset"]) {
    for (const type of ["input", "change"]) {
      $(id).addEventListener(type, () => { $("spec").value = specFromControls(); renderSoon(); });
    }
  }

  controlsFromSpec($("spec").value);
  const images = await showImageList();
  if (images.length > 0) {
    const preferred = images.find((i) => /rocket/i.test(i.path)) || images[0];
    selectSource(preferred.path);
    await render();
  }
  document.body.dataset.ready = "1";
}

start();
