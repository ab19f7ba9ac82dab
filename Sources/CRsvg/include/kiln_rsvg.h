#ifndef KILN_RSVG_H
#define KILN_RSVG_H
/* librsvg 2.54 (Rust, with cairo), loaded on first use (dlopen of librsvg-2.so.2, libcairo.so.2,
 * libgobject-2.0.so.0): a server never maps librsvg and the libraries it pulls in (GLib, Pango,
 * HarfBuzz, fontconfig, ...) until a request needs SVG. No header of these libraries is used:
 * the few functions are declared here as librsvg's and cairo's stable C ABI defines them.
 *
 * The shim draws a whole (already sanitised, see SVGSanitizer) document in one call, because the
 * calls are GObject and cairo ones Swift has no module for. librsvg gets no base URL, so it
 * refuses every reference to a file or a network resource by itself too. */
#include <stddef.h>
#include <stdint.h>

#ifndef __clang__
#define _Nonnull
#define _Nullable
#endif

/* 1 when librsvg and cairo loaded (thread-safe; loads once), 0 when either is missing. */
int kiln_rsvg_available(void);

/* The library's version ("2.54.7"), or "" when it is missing. */
const char *_Nonnull kiln_rsvg_version(void);

/* Draws `data` (`length` bytes of SVG) into `pixels`: `width` x `height` cairo ARGB32 pixels
 * (premultiplied, native-endian 32-bit words: B, G, R, A bytes on x86), rows of `width * 4`
 * bytes, which the caller allocates and zeroes. The document's intrinsic size
 * (`intrinsic_width` x `intrinsic_height` CSS pixels) is scaled to the raster on each axis.
 * Returns 0, or -1 with a one-line reason in `error` (NUL-terminated, at most `error_length`). */
int kiln_rsvg_render(const uint8_t *_Nonnull data, size_t length, double intrinsic_width, double intrinsic_height,
                     int width, int height, uint8_t *_Nonnull pixels, char *_Nonnull error, size_t error_length);

#endif
