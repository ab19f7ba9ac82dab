#ifndef KILN_TIFF_H
#define KILN_TIFF_H
/* libtiff's functions that Kiln calls, loaded on first use (dlopen of libtiff.so.6), as CAvif does:
 * a process maps libtiff (and the codec libraries it pulls in: libjpeg, zstd, lzma, webp, jbig)
 * only when a request reads a TIFF. TIFFGetField is variadic, which Swift cannot call, so the
 * calls are made here and Swift sees the small fixed-arity API below. libtiff never prints:
 * errors and warnings go to per-handle handlers (TIFFOpenOptions, libtiff 4.5) that keep the
 * first error's text, and the global handlers are set to none. */
#include <stddef.h>
#include <stdint.h>

#ifndef __clang__
#define _Nonnull
#define _Nullable
#endif

/* A TIFF opened over bytes in memory (read only, not mapped). */
typedef struct kiln_tiff_file kiln_tiff_file;

/* What one directory (page) says, read with TIFFGetField / TIFFGetFieldDefaulted. */
typedef struct {
    uint32_t width, height;
    uint32_t samples_per_pixel, bits_per_sample, photometric, compression;
    /* Orientation tag (274), 1 when absent. */
    uint32_t orientation;
    /* 1 when libtiff's RGBA reader returns alpha (an associated, unassociated or unspecified extra sample). */
    int has_alpha;
    int tiled;
    uint32_t tile_width, tile_height, rows_per_strip;
    /* Bytes of TIFFTAG_ICCPROFILE, 0 when none. */
    uint32_t icc_size;
} kiln_tiff_info;

/* 1 when libtiff.so.6 and every function Kiln uses were found. Thread-safe; loads once. */
int kiln_tiff_available(void);

/* Opens `data` (which must outlive the handle); libtiff's single allocations are bounded by
 * `max_alloc` bytes. NULL on failure, with libtiff's reason in `error`. */
kiln_tiff_file *_Nullable kiln_tiff_open(const uint8_t *_Nonnull data, size_t size, int64_t max_alloc,
                                         char *_Nonnull error, size_t error_size);
void kiln_tiff_close(kiln_tiff_file *_Nonnull file);
/* The first error libtiff reported on this handle ("" when none). */
const char *_Nonnull kiln_tiff_error(const kiln_tiff_file *_Nonnull file);

/* Selects directory `directory` (0-based) and reads its fields. 1 on success. */
int kiln_tiff_read_info(kiln_tiff_file *_Nonnull file, uint32_t directory, kiln_tiff_info *_Nonnull info);
/* Copies the current directory's ICC profile into `out` (at most `capacity` bytes); returns its size. */
size_t kiln_tiff_icc(kiln_tiff_file *_Nonnull file, uint8_t *_Nullable out, size_t capacity);
/* Reads the current directory through libtiff's RGBA interface into `raster` (width × height
 * packed ABGR words, TIFFGetR...), top row first, in STORED orientation (the Orientation tag is
 * not applied). `alpha` gets the RGBA reader's alpha kind (0 none, 1 associated, 2 unassociated);
 * with alpha, the colour samples come out premultiplied either way. 1 on success. */
int kiln_tiff_read_rgba(kiln_tiff_file *_Nonnull file, uint32_t *_Nonnull raster, uint32_t width, uint32_t height,
                        int *_Nonnull alpha);

#endif
