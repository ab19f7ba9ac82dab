// Native Kiln URLs for browsers and build tools: no dependencies, no signing.
//
//   kilnURL('photos/cat.jpg', { width: 640, quality: 70, format: 'auto' })
//     → '/w:640/q:70/f:auto/-/photos/cat.jpg'
//   srcset('photos/cat.jpg', [320, 640], { baseURL: 'https://img.example.com' })
//     → 'https://img.example.com/w:320/-/photos/cat.jpg 320w, https://img.example.com/w:640/-/photos/cat.jpg 640w'
//
// URLs are written as Kiln's parser reads them (docs/url-api.md): options first, one path segment
// each, then the source path relative to source.root, every segment percent-encoded (all bytes but
// A-Z a-z 0-9 - . _ ~), with a `-` segment before it when its first segment could be read as an
// option (it holds a `:`, is `-`, or is a bare name such as `photos`, `circle` or a custom
// processor's). `kiln srcset` writes the same URLs.
//
// Signed URLs are never made here: a signing key must not reach a browser. Make them on the
// server, with `kiln sign` / `kiln srcset --sign`, or the Python and openssl snippets of
// docs/security.md, and put the signed URLs in the page.

const FITS = { fit: 'fit', fill: 'fill', force: 'force', contain: 'fit', cover: 'fill' };
const FORMATS = { jpeg: 'jpeg', jpg: 'jpeg', png: 'png', webp: 'webp', avif: 'avif', auto: 'auto' };
export const MAX_DIMENSION = 16384;

/** One path segment, percent-encoded as Kiln's `kiln srcset` writes it. */
export function encodeSegment(segment) {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** Whether Kiln could read this first source segment as an option (then a `-` goes before it). */
export function needsMarker(first) {
  return first === '-' || first.includes(':') || /^\p{L}[\p{L}\p{N}_]*$/u.test(first);
}

/** The source path's segments: a path under source.root, never an absolute URL, `.` or `..`. */
export function sourceSegments(src) {
  if (typeof src !== 'string' || src === '') throw new TypeError('kiln: src must be a non-empty path');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(src) || /^(data|blob):/i.test(src) || src.startsWith('//')) {
    throw new TypeError(`kiln: src must be a path under Kiln's source root (or a configured origin's name), not a URL: ${src}`);
  }
  const parts = src.split('/').filter((s) => s !== '');
  if (parts.length === 0) throw new TypeError('kiln: src has no path');
  for (const p of parts) {
    if (p === '.' || p === '..') throw new TypeError(`kiln: '.' and '..' are not allowed in src: ${src}`);
  }
  return parts;
}

function dimension(name, value) {
  if (!Number.isInteger(value) || value < 1 || value > MAX_DIMENSION) {
    throw new RangeError(`kiln: ${name} must be a whole number from 1 to ${MAX_DIMENSION}, got ${value}`);
  }
  return value;
}

/** The option segments for `options` (preset, size, dpr, quality, format), in that order. */
export function optionSegments(options = {}) {
  const out = [];
  const { width, height, fit, quality, format, dpr, preset } = options;
  if (preset != null) {
    const names = Array.isArray(preset) ? preset : [preset];
    for (const n of names) {
      if (typeof n !== 'string' || !/^[A-Za-z0-9_-]+$/.test(n)) throw new TypeError(`kiln: bad preset name: ${n}`);
    }
    if (names.length) out.push('pr:' + names.join(':'));
  }
  const w = width == null ? null : dimension('width', Number(width));
  const h = height == null ? null : dimension('height', Number(height));
  let mode = null;
  if (fit != null) {
    mode = FITS[fit];
    if (!mode) throw new TypeError(`kiln: fit must be one of ${Object.keys(FITS).join(', ')}, got ${fit}`);
  }
  if (w != null && h != null) out.push(`rs:${w}:${h}${mode && mode !== 'fit' ? ':' + mode : ''}`);
  else if (w != null) out.push(`w:${w}`);
  else if (h != null) out.push(`h:${h}`);
  if (dpr != null && Number(dpr) !== 1) {
    const d = Number(dpr);
    if (!(d >= 1 && d <= 4)) throw new RangeError(`kiln: dpr must be from 1 to 4, got ${dpr}`);
    out.push(`dpr:${d}`);
  }
  if (quality != null) {
    const q = Number(quality);
    if (!Number.isInteger(q) || q < 1 || q > 100) throw new RangeError(`kiln: quality must be a whole number from 1 to 100, got ${quality}`);
    out.push(`q:${q}`);
  }
  if (format != null) {
    const f = FORMATS[String(format).toLowerCase()];
    if (!f) throw new TypeError(`kiln: format must be one of ${Object.keys(FORMATS).join(', ')}, got ${format}`);
    out.push(`f:${f}`);
  }
  return out;
}

/** The URL of one variant: `baseURL` (default: none, a root-relative URL) + options + source. */
export function kilnURL(src, options = {}) {
  const source = sourceSegments(src);
  const marker = needsMarker(source[0]) ? ['-'] : [];
  const path = [...optionSegments(options), ...marker, ...source.map(encodeSegment)].map((s) => '/' + s).join('');
  return String(options.baseURL ?? '').replace(/\/+$/, '') + path;
}

/** A `srcset` value: one `<url> <width>w` entry per width (sorted, without repeats). */
export function srcset(src, widths, options = {}) {
  if (!Array.isArray(widths) || widths.length === 0) throw new TypeError('kiln: widths must be a non-empty array');
  const sorted = [...new Set(widths.map(Number))].sort((a, b) => a - b);
  return sorted.map((w) => `${kilnURL(src, { ...options, width: w, height: undefined })} ${w}w`).join(', ');
}
