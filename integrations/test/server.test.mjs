// Every URL each loader builds, rendered by a real Kiln: status 200, the image type and the pixel
// size read from the answer's header. Needs KILN_TEST_BASE_URL (e.g. http://127.0.0.1:8080) naming
// a Kiln whose source root holds fixtures.json's files: Tests/integration/test_integrations.py
// starts kiln behind nginx with such a root and runs these tests. Without it they are skipped.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { kilnURL, srcset } from '../kiln-url.mjs';
import astro from '../astro/kiln-service.mjs';
import nextLoader from '../next/kiln-loader.mjs';
import { getImage } from '../nuxt/kiln-provider.mjs';
import { imageSize } from '../testing/image-size.mjs';

const BASE = process.env.KILN_TEST_BASE_URL;
const skip = BASE ? false : 'KILN_TEST_BASE_URL is not set: no Kiln to render the URLs (Tests/integration/test_integrations.py starts one and sets it)';
const FILES = JSON.parse(readFileSync(new URL('./fixtures.json', import.meta.url), 'utf8')).files;
const SOURCES = Object.entries(FILES);
const WIDTHS = [64, 320, 1000];

/** GETs `url`; checks 200, the type and the size (height from the source's aspect, ±1 for rounding). */
async function render(url, { type, width, height, accept }) {
  const answer = await fetch(url, { headers: accept ? { accept } : {} });
  const body = new Uint8Array(await answer.arrayBuffer());
  assert.equal(answer.status, 200, `${url}: ${answer.status} ${new TextDecoder().decode(body.subarray(0, 300))}`);
  const got = imageSize(body);
  assert.equal(answer.headers.get('content-type'), `image/${got.type}`, url);
  assert.equal(got.type, type, `${url}: ${got.type}, expected ${type}`);
  assert.equal(got.width, width, `${url}: ${got.width}x${got.height}, expected width ${width}`);
  assert.ok(Math.abs(got.height - height) <= 1, `${url}: ${got.width}x${got.height}, expected height ${height}`);
  return got;
}

const scaled = (file, w) => Math.round((w * file.height) / file.width);

test('server: kilnURL widths, sizes, fit, quality and format render as asked', { skip }, async () => {
  let n = 0;
  for (const [src, file] of SOURCES) {
    for (const w of WIDTHS) {
      await render(kilnURL(src, { width: w, baseURL: BASE }), { type: file.type, width: w, height: scaled(file, w) });
      n++;
    }
    await render(kilnURL(src, { height: 90, format: 'png', baseURL: BASE }), { type: 'png', width: 160, height: 90 });
    await render(kilnURL(src, { width: 120, height: 120, fit: 'cover', quality: 60, format: 'webp', baseURL: BASE }),
      { type: 'webp', width: 120, height: 120 });
    await render(kilnURL(src, { width: 100, height: 80, fit: 'force', format: 'jpeg', baseURL: BASE }), { type: 'jpeg', width: 100, height: 80 });
    await render(kilnURL(src, { width: 150, dpr: 2, baseURL: BASE }), { type: file.type, width: 300, height: scaled(file, 300) });
    n += 4;
  }
  assert.equal(n, SOURCES.length * (WIDTHS.length + 4));
});

test('server: every srcset entry renders at its width', { skip }, async () => {
  for (const [src, file] of SOURCES) {
    const entries = srcset(src, [200, 480, 960], { quality: 70, format: 'webp', baseURL: BASE }).split(', ');
    assert.equal(entries.length, 3);
    for (const entry of entries) {
      const [url, descriptor] = entry.split(' ');
      const w = Number(descriptor.slice(0, -1));
      await render(url, { type: 'webp', width: w, height: scaled(file, w) });
    }
  }
});

test('server: Next.js loader URLs render, f:auto answering WebP to a WebP-accepting browser', { skip }, async () => {
  const saved = process.env.NEXT_PUBLIC_KILN_URL;
  process.env.NEXT_PUBLIC_KILN_URL = BASE;
  try {
    // Next.js's default deviceSizes and imageSizes that fit the 1920 px sources.
    for (const [src, file] of SOURCES) {
      for (const width of [16, 256, 640, 1080, 1920]) {
        const url = nextLoader({ src: '/' + src, width, quality: 75 });
        await render(url, { type: 'webp', width, height: scaled(file, width), accept: 'image/webp,image/*,*/*;q=0.8' });
      }
    }
  } finally {
    if (saved === undefined) delete process.env.NEXT_PUBLIC_KILN_URL;
    else process.env.NEXT_PUBLIC_KILN_URL = saved;
  }
});

test('server: Astro service URLs and srcset entries render', { skip }, async () => {
  const config = { service: { entrypoint: 'kiln-service.mjs', config: { baseURL: BASE } } };
  for (const [src, file] of SOURCES) {
    const options = astro.validateOptions({ src, width: 400, height: 300, fit: 'cover', quality: 'mid', format: 'png' }, config);
    await render(astro.getURL(options, config), { type: 'png', width: 400, height: 300 });
    for (const entry of astro.getSrcSet({ src, width: 320, height: 180, format: 'jpeg', widths: [320, 640] }, config)) {
      await render(astro.getURL(entry.transform, config), { type: 'jpeg', width: entry.transform.width, height: entry.transform.height });
    }
    for (const entry of astro.getSrcSet({ src: { src: '/' + src, width: file.width, height: file.height }, width: 200, densities: [1, 2] }, config)) {
      await render(astro.getURL(entry.transform, config),
        { type: 'webp', width: entry.transform.width, height: scaled(file, entry.transform.width), accept: 'image/webp' });
    }
  }
});

test('server: Nuxt provider URLs render', { skip }, async () => {
  for (const [src, file] of SOURCES) {
    await render(getImage('/' + src, { modifiers: { width: 500, format: 'webp', quality: 70 }, baseURL: BASE }).url,
      { type: 'webp', width: 500, height: scaled(file, 500) });
    await render(getImage(src, { modifiers: { width: '96', height: '96', fit: 'cover', format: 'png' }, baseURL: BASE }).url,
      { type: 'png', width: 96, height: 96 });
    await render(getImage(src, { modifiers: { width: 50, height: 40, fit: 'fill' }, baseURL: BASE }).url,
      { type: file.type, width: 50, height: 40 });
  }
});
