// Unit checks of the URLs each loader builds (no server): node --test integrations/test/
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { encodeSegment, kilnURL, needsMarker, srcset } from '../kiln-url.mjs';
import astro from '../astro/kiln-service.mjs';
import nextLoader from '../next/kiln-loader.mjs';
import kilnProvider, { getImage } from '../nuxt/kiln-provider.mjs';

test('kilnURL: options in order, then the source path', () => {
  assert.equal(kilnURL('photo.jpg', { width: 640 }), '/w:640/photo.jpg');
  assert.equal(kilnURL('/photo.jpg', { height: 200 }), '/h:200/photo.jpg');
  assert.equal(kilnURL('photo.jpg', { width: 300, height: 200 }), '/rs:300:200/photo.jpg');
  assert.equal(kilnURL('photo.jpg', { width: 300, height: 200, fit: 'cover' }), '/rs:300:200:fill/photo.jpg');
  assert.equal(kilnURL('photo.jpg', { width: 300, height: 200, fit: 'force' }), '/rs:300:200:force/photo.jpg');
  assert.equal(kilnURL('photo.jpg', { preset: 'card', width: 320, dpr: 2, quality: 70, format: 'jpg' }),
    '/pr:card/w:320/dpr:2/q:70/f:jpeg/photo.jpg');
  assert.equal(kilnURL('photo.jpg', { preset: ['a', 'b'], format: 'auto' }), '/pr:a:b/f:auto/photo.jpg');
  assert.equal(kilnURL('photo.jpg', { dpr: 1 }), '/photo.jpg');
  assert.equal(kilnURL('photo.jpg', { width: 64, baseURL: 'https://img.example.com/' }), 'https://img.example.com/w:64/photo.jpg');
});

test('kilnURL: a `-` before sources whose first segment could be an option', () => {
  assert.equal(kilnURL('photos/cat.jpg', { width: 64 }), '/w:64/-/photos/cat.jpg');
  assert.equal(kilnURL('circle/a.png', { width: 64 }), '/w:64/-/circle/a.png');
  assert.equal(kilnURL('w:50/a.webp', { width: 64 }), '/w:64/-/w%3A50/a.webp');
  assert.equal(kilnURL('unsafe/a.jpg'), '/-/unsafe/a.jpg');
  assert.equal(kilnURL('2026/a.jpg', { width: 64 }), '/w:64/2026/a.jpg');
  assert.equal(kilnURL('cat.jpg/a.jpg', { width: 64 }), '/w:64/cat.jpg/a.jpg');
  for (const s of ['-', 'a:b', 'photos', 'gs', 'my_proc2', 'café']) assert.ok(needsMarker(s), s);
  for (const s of ['2026', 'a.jpg', 'a-b', '_x']) assert.ok(!needsMarker(s), s);
});

test('kilnURL: path segments percent-encoded, all but A-Z a-z 0-9 - . _ ~', () => {
  assert.equal(encodeSegment("café (1)+a,b&c#?'*!.jpg"), 'caf%C3%A9%20%281%29%2Ba%2Cb%26c%23%3F%27%2A%21.jpg');
  assert.equal(kilnURL('odd names/café (1)+a,b&c#?.jpg', { width: 10 }),
    '/w:10/odd%20names/caf%C3%A9%20%281%29%2Ba%2Cb%26c%23%3F.jpg');
  assert.equal(kilnURL('a//b/./c.jpg'.replace('/./', '/'), {}), '/-/a/b/c.jpg');
});

test('kilnURL: bad input throws, naming it', () => {
  assert.throws(() => kilnURL('https://evil.example/cat.jpg', { width: 64 }), /not a URL/);
  assert.throws(() => kilnURL('//evil.example/cat.jpg'), /not a URL/);
  assert.throws(() => kilnURL('data:image/png;base64,AAAA'), /not a URL/);
  assert.throws(() => kilnURL('../etc/passwd'), /'\.' and '\.\.'/);
  assert.throws(() => kilnURL(''), /non-empty/);
  assert.throws(() => kilnURL('a.jpg', { width: 0 }), /width must be/);
  assert.throws(() => kilnURL('a.jpg', { width: 12.5 }), /width must be/);
  assert.throws(() => kilnURL('a.jpg', { width: 16385 }), /width must be/);
  assert.throws(() => kilnURL('a.jpg', { quality: 101 }), /quality/);
  assert.throws(() => kilnURL('a.jpg', { format: 'gif' }), /format/);
  assert.throws(() => kilnURL('a.jpg', { fit: 'outside' }), /fit/);
  assert.throws(() => kilnURL('a.jpg', { dpr: 5 }), /dpr/);
  assert.throws(() => kilnURL('a.jpg', { preset: 'a/b' }), /preset/);
});

test('srcset: one `<url> <w>w` per width, sorted, no repeats', () => {
  assert.equal(srcset('photos/cat.jpg', [640, 320, 640], { quality: 70, format: 'auto', baseURL: 'http://img.example.com' }),
    'http://img.example.com/w:320/q:70/f:auto/-/photos/cat.jpg 320w, http://img.example.com/w:640/q:70/f:auto/-/photos/cat.jpg 640w');
  assert.equal(srcset('a.jpg', [100], { preset: 'card' }), '/pr:card/w:100/a.jpg 100w');
  assert.throws(() => srcset('a.jpg', []), /widths/);
});

test('Next.js loader: width, quality, f:auto, NEXT_PUBLIC_KILN_URL', () => {
  const saved = process.env.NEXT_PUBLIC_KILN_URL;
  try {
    delete process.env.NEXT_PUBLIC_KILN_URL;
    assert.equal(nextLoader({ src: '/photos/cat.jpg', width: 640, quality: 75 }), '/w:640/q:75/f:auto/-/photos/cat.jpg');
    assert.equal(nextLoader({ src: '/photo.jpg', width: 3840 }), '/w:3840/f:auto/photo.jpg');
    process.env.NEXT_PUBLIC_KILN_URL = 'https://img.example.com';
    assert.equal(nextLoader({ src: '/photo.jpg', width: 16 }), 'https://img.example.com/w:16/f:auto/photo.jpg');
    assert.throws(() => nextLoader({ src: 'https://other.example/x.jpg', width: 16 }), /not a URL/);
  } finally {
    if (saved === undefined) delete process.env.NEXT_PUBLIC_KILN_URL;
    else process.env.NEXT_PUBLIC_KILN_URL = saved;
  }
});

test('Astro service: getURL, named qualities, fit, srcset entries', () => {
  const config = { service: { entrypoint: 'kiln-service.mjs', config: { baseURL: 'https://img.example.com' } } };
  assert.equal(astro.getURL({ src: 'photos/cat.jpg', width: 640, height: 360, quality: 'high', fit: 'cover' }, config),
    'https://img.example.com/rs:640:360:fill/q:80/f:auto/-/photos/cat.jpg');
  assert.equal(astro.getURL({ src: { src: '/photo.jpg', width: 1920, height: 1080, format: 'jpg' }, width: 100, format: 'webp' }, {}),
    '/w:100/f:webp/photo.jpg');
  const options = { src: 'photo.jpg', width: 400 };
  assert.equal(astro.validateOptions(options, config), options);
  assert.throws(() => astro.validateOptions({ src: 'photo.jpg', width: -1 }, config), /width/);
  assert.throws(() => astro.getURL({ src: 'photo.jpg', width: 10, height: 10, fit: 'none' }, config), /fit 'none'/);
  const set = astro.getSrcSet({ src: 'photo.jpg', width: 400, height: 200, widths: [800, 400] }, config);
  assert.deepEqual(set.map((e) => [e.descriptor, e.transform.width, e.transform.height]), [['400w', 400, 200], ['800w', 800, 400]]);
  const dense = astro.getSrcSet({ src: 'photo.jpg', width: 300, densities: [1, 2] }, config);
  assert.deepEqual(dense.map((e) => [e.descriptor, astro.getURL(e.transform, config)]),
    [['1x', 'https://img.example.com/w:300/f:auto/photo.jpg'], ['2x', 'https://img.example.com/w:600/f:auto/photo.jpg']]);
  const attrs = astro.getHTMLAttributes({ src: 'photo.jpg', width: 300, height: 200, format: 'webp', alt: 'x' });
  assert.deepEqual(attrs, { alt: 'x', width: 300, height: 200, loading: 'lazy', decoding: 'async' });
});

test('Nuxt provider: modifiers, baseURL, unsupported modifiers refused', () => {
  assert.equal(getImage('/photos/cat.jpg', { modifiers: { width: '640', format: 'webp', quality: 70 }, baseURL: 'https://img.example.com' }).url,
    'https://img.example.com/w:640/q:70/f:webp/-/photos/cat.jpg');
  assert.equal(getImage('photo.jpg', { modifiers: { width: 300, height: 300, fit: 'cover' } }).url, '/rs:300:300:fill/photo.jpg');
  assert.equal(getImage('photo.jpg', { modifiers: { width: 300, height: 200, fit: 'fill' } }).url, '/rs:300:200:force/photo.jpg');
  assert.equal(getImage('photo.jpg', { modifiers: { width: 300, background: undefined } }).url, '/w:300/photo.jpg');
  assert.throws(() => getImage('photo.jpg', { modifiers: { width: 300, blur: 4, rotate: 90 } }), /not supported by Kiln: blur, rotate/);
  assert.throws(() => getImage('photo.jpg', { modifiers: { width: 300, height: 300, fit: 'outside' } }), /fit 'outside'/);
  assert.equal(kilnProvider().getImage, getImage);
});
