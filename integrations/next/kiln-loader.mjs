// Next.js `images.loaderFile` for Kiln (see integrations/README.md):
//   next.config.js: images: { loader: 'custom', loaderFile: './kiln-loader.mjs' }
// <Image src="/photos/cat.jpg" width={640} ...> then asks Kiln for /w:<width>/[q:<quality>/]f:auto/-/photos/cat.jpg
// on NEXT_PUBLIC_KILN_URL (e.g. https://img.example.com), or on the site itself when it is unset.
import { kilnURL } from '../kiln-url.mjs';

function baseURL() {
  try {
    // Next.js inlines NEXT_PUBLIC_* at build time; keep the literal expression.
    return process.env.NEXT_PUBLIC_KILN_URL ?? '';
  } catch {
    return '';
  }
}

export default function kilnLoader({ src, width, quality }) {
  return kilnURL(src, { width, quality: quality ?? undefined, format: 'auto', baseURL: baseURL() });
}
