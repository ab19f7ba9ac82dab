// A Nuxt Image provider for Kiln (see integrations/README.md):
//   nuxt.config.ts: image: { providers: { kiln: { provider: '~/kiln-provider.mjs', options: { baseURL: 'https://img.example.com' } } } }
// <NuxtImg provider="kiln" src="/photos/cat.jpg" width="640" format="webp" /> then points at
// https://img.example.com/w:640/f:webp/-/photos/cat.jpg. Modifiers Kiln cannot honour are an error, never ignored.
import { kilnURL } from '../kiln-url.mjs';

// Nuxt Image's `fit` (sharp's words) → Kiln's resize modes.
const FITS = { cover: 'fill', contain: 'fit', fill: 'force', inside: 'fit' };
const SUPPORTED = new Set(['width', 'height', 'fit', 'quality', 'format', 'dpr', 'preset']);

export function getImage(src, { modifiers = {}, baseURL = '' } = {}) {
  const given = Object.fromEntries(Object.entries(modifiers).filter(([, v]) => v != null && v !== ''));
  const unknown = Object.keys(given).filter((k) => !SUPPORTED.has(k));
  if (unknown.length) throw new TypeError(`kiln: Nuxt Image modifiers not supported by Kiln: ${unknown.join(', ')}`);
  if (given.fit != null && !FITS[given.fit]) {
    throw new TypeError(`kiln: Nuxt Image fit '${given.fit}' is not supported (use ${Object.keys(FITS).join(', ')})`);
  }
  const num = (v) => (v == null ? undefined : Number(v));
  const url = kilnURL(src, {
    width: num(given.width),
    height: num(given.height),
    fit: given.fit == null ? undefined : FITS[given.fit],
    quality: num(given.quality),
    format: given.format,
    dpr: num(given.dpr),
    preset: given.preset,
    baseURL,
  });
  return { url };
}

// @nuxt/image 2 calls the default export (what its defineProvider returns) for the provider;
// version 1 imports `getImage` by name. Both are here, with no import from @nuxt/image.
const provider = { getImage };
export default function kilnProvider() {
  return provider;
}
