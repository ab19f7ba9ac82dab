// An Astro external image service for Kiln (see integrations/README.md):
//   astro.config.mjs: image: { service: { entrypoint: './kiln-service.mjs', config: { baseURL: 'https://img.example.com' } } }
// <Image src="photos/cat.jpg" width={640} height={480} alt=""> then points at
// https://img.example.com/rs:640:480/f:auto/-/photos/cat.jpg; `widths` / `densities` give a srcset of such URLs.
import { kilnURL } from '../kiln-url.mjs';

// Astro's named qualities (its parseQuality).
const QUALITIES = { low: 25, mid: 50, high: 80, max: 100 };
// Astro's `fit` (CSS object-fit words) → Kiln's resize modes.
const FITS = { cover: 'fill', contain: 'fit', fill: 'force', inside: 'fit', 'scale-down': 'fit' };

function source(options) {
  return typeof options.src === 'string' ? options.src : options.src?.src;
}

function kilnOptions(options, imageConfig) {
  const fit = options.fit == null ? undefined : FITS[options.fit];
  if (options.fit != null && !fit) throw new TypeError(`kiln: Astro fit '${options.fit}' is not supported (use ${Object.keys(FITS).join(', ')})`);
  const quality = typeof options.quality === 'string' && options.quality in QUALITIES ? QUALITIES[options.quality] : options.quality;
  return {
    width: options.width,
    height: options.height,
    fit,
    quality,
    format: options.format ?? 'auto',
    baseURL: imageConfig?.service?.config?.baseURL ?? '',
  };
}

const service = {
  /** Checks the options by building the URL (a bad width or format fails the build); changes nothing. */
  validateOptions(options, imageConfig) {
    kilnURL(source(options), kilnOptions(options, imageConfig));
    return options;
  },

  getURL(options, imageConfig) {
    return kilnURL(source(options), kilnOptions(options, imageConfig));
  },

  /** One entry per `widths` value (`640w`) or per `densities` value times `width` (`2x`). */
  getSrcSet(options, imageConfig) {
    const entries = [];
    const { widths, densities, ...rest } = options;
    if (Array.isArray(widths)) {
      for (const w of [...new Set(widths)].sort((a, b) => a - b)) {
        const height = rest.width && rest.height ? Math.round((rest.height * w) / rest.width) : undefined;
        entries.push({ transform: { ...rest, width: w, height }, descriptor: `${w}w`, attributes: {} });
      }
    } else if (Array.isArray(densities) && rest.width) {
      for (const d of densities.map(Number)) {
        const width = Math.round(rest.width * d);
        const height = rest.height ? Math.round(rest.height * d) : undefined;
        entries.push({ transform: { ...rest, width, height }, descriptor: `${d}x`, attributes: {} });
      }
    }
    return entries;
  },

  getHTMLAttributes(options) {
    const { src, width, height, format, quality, fit, position, densities, widths, ...attributes } = options;
    return { ...attributes, width, height, loading: attributes.loading ?? 'lazy', decoding: attributes.decoding ?? 'async' };
  },
};

export default service;
