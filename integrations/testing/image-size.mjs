// The pixel size and type of an encoded image from its header: PNG, JPEG, WebP (VP8, VP8L, VP8X)
// and AVIF (the `ispe` property). Enough for the server tests; no dependencies.

const u16be = (b, i) => (b[i] << 8) | b[i + 1];
const u32be = (b, i) => ((b[i] << 24) >>> 0) + ((b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]);
const u16le = (b, i) => b[i] | (b[i + 1] << 8);
const u24le = (b, i) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16);
const ascii = (b, i, n) => String.fromCharCode(...b.subarray(i, i + n));

/** `{ type, width, height }`, or throws naming what the bytes are not. */
export function imageSize(bytes) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (b.length >= 24 && u32be(b, 0) === 0x89504e47 && ascii(b, 12, 4) === 'IHDR') {
    return { type: 'png', width: u32be(b, 16), height: u32be(b, 20) };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) throw new Error(`JPEG: no marker at byte ${i}`);
      const marker = b[i + 1];
      if (marker === 0xff) { i += 1; continue; }
      const length = u16be(b, i + 2);
      // SOF0..SOF15 but DHT (C4), JPG (C8) and DAC (CC).
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
        return { type: 'jpeg', width: u16be(b, i + 7), height: u16be(b, i + 5) };
      }
      i += 2 + length;
    }
    throw new Error('JPEG: no SOF marker');
  }
  if (b.length >= 30 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP') {
    const chunk = ascii(b, 12, 4);
    if (chunk === 'VP8 ') return { type: 'webp', width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
    if (chunk === 'VP8L') {
      const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
      return { type: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
    if (chunk === 'VP8X') return { type: 'webp', width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
    throw new Error(`WebP: unknown first chunk ${chunk}`);
  }
  if (b.length >= 12 && ascii(b, 4, 4) === 'ftyp' && /avi[fs]/.test(ascii(b, 8, Math.min(u32be(b, 0), b.length) - 8))) {
    for (let i = 0; i + 20 <= b.length; i++) {
      if (b[i] === 0x69 && ascii(b, i, 4) === 'ispe') return { type: 'avif', width: u32be(b, i + 8), height: u32be(b, i + 12) };
    }
    throw new Error('AVIF: no ispe property');
  }
  throw new Error(`not a PNG, JPEG, WebP or AVIF image (first bytes ${[...b.subarray(0, 8)].map((x) => x.toString(16)).join(' ')})`);
}
