#define _GNU_SOURCE
#include "kiln_tiff.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

typedef struct {
    __typeof__(TIFFOpenOptionsAlloc) *TIFFOpenOptionsAlloc;
    __typeof__(TIFFOpenOptionsFree) *TIFFOpenOptionsFree;
    __typeof__(TIFFOpenOptionsSetMaxSingleMemAlloc) *TIFFOpenOptionsSetMaxSingleMemAlloc;
    __typeof__(TIFFOpenOptionsSetErrorHandlerExtR) *TIFFOpenOptionsSetErrorHandlerExtR;
    __typeof__(TIFFOpenOptionsSetWarningHandlerExtR) *TIFFOpenOptionsSetWarningHandlerExtR;
    __typeof__(TIFFClientOpenExt) *TIFFClientOpenExt;
    __typeof__(TIFFClose) *TIFFClose;
    __typeof__(TIFFSetDirectory) *TIFFSetDirectory;
    __typeof__(TIFFCurrentDirectory) *TIFFCurrentDirectory;
    __typeof__(TIFFGetField) *TIFFGetField;
    __typeof__(TIFFGetFieldDefaulted) *TIFFGetFieldDefaulted;
    __typeof__(TIFFIsTiled) *TIFFIsTiled;
    __typeof__(TIFFRGBAImageOK) *TIFFRGBAImageOK;
    __typeof__(TIFFRGBAImageBegin) *TIFFRGBAImageBegin;
    __typeof__(TIFFRGBAImageGet) *TIFFRGBAImageGet;
    __typeof__(TIFFRGBAImageEnd) *TIFFRGBAImageEnd;
    __typeof__(TIFFSetErrorHandler) *TIFFSetErrorHandler;
    __typeof__(TIFFSetWarningHandler) *TIFFSetWarningHandler;
    __typeof__(TIFFSetErrorHandlerExt) *TIFFSetErrorHandlerExt;
    __typeof__(TIFFSetWarningHandlerExt) *TIFFSetWarningHandlerExt;
} kiln_tiff_api;

static kiln_tiff_api api;
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LOAD(name) if (!(*(void **)&api.name = dlsym(lib, #name))) return

static void load(void) {
    void *lib = dlopen("libtiff.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    LOAD(TIFFOpenOptionsAlloc);
    LOAD(TIFFOpenOptionsFree);
    LOAD(TIFFOpenOptionsSetMaxSingleMemAlloc);
    LOAD(TIFFOpenOptionsSetErrorHandlerExtR);
    LOAD(TIFFOpenOptionsSetWarningHandlerExtR);
    LOAD(TIFFClientOpenExt);
    LOAD(TIFFClose);
    LOAD(TIFFSetDirectory);
    LOAD(TIFFCurrentDirectory);
    LOAD(TIFFGetField);
    LOAD(TIFFGetFieldDefaulted);
    LOAD(TIFFIsTiled);
    LOAD(TIFFRGBAImageOK);
    LOAD(TIFFRGBAImageBegin);
    LOAD(TIFFRGBAImageGet);
    LOAD(TIFFRGBAImageEnd);
    LOAD(TIFFSetErrorHandler);
    LOAD(TIFFSetWarningHandler);
    LOAD(TIFFSetErrorHandlerExt);
    LOAD(TIFFSetWarningHandlerExt);
    /* Messages reported without a handle (none of ours should be) are dropped, never printed. */
    api.TIFFSetErrorHandler(NULL);
    api.TIFFSetWarningHandler(NULL);
    api.TIFFSetErrorHandlerExt(NULL);
    api.TIFFSetWarningHandlerExt(NULL);
    loaded = 1;
}

int kiln_tiff_available(void) {
    pthread_once(&once, load);
    return loaded;
}

struct kiln_tiff_file {
    const uint8_t *data;
    uint64_t size;
    uint64_t position;
    TIFF *tif;
    char error[256];
};

static tmsize_t read_proc(thandle_t handle, void *buffer, tmsize_t count) {
    struct kiln_tiff_file *file = handle;
    if (count <= 0 || file->position >= file->size) return 0;
    uint64_t n = file->size - file->position;
    if ((uint64_t)count < n) n = (uint64_t)count;
    memcpy(buffer, file->data + file->position, (size_t)n);
    file->position += n;
    return (tmsize_t)n;
}

static tmsize_t write_proc(thandle_t handle, void *buffer, tmsize_t count) {
    (void)handle; (void)buffer; (void)count;
    return -1;
}

static toff_t seek_proc(thandle_t handle, toff_t offset, int whence) {
    struct kiln_tiff_file *file = handle;
    uint64_t base = whence == SEEK_CUR ? file->position : whence == SEEK_END ? file->size : 0;
    if (offset > UINT64_MAX - base) return (toff_t)-1;
    file->position = base + offset;
    return file->position;
}

static int close_proc(thandle_t handle) { (void)handle; return 0; }
static toff_t size_proc(thandle_t handle) { return ((struct kiln_tiff_file *)handle)->size; }
static int map_proc(thandle_t handle, void **base, toff_t *size) { (void)handle; (void)base; (void)size; return 0; }
static void unmap_proc(thandle_t handle, void *base, toff_t size) { (void)handle; (void)base; (void)size; }

/* Keeps the first error; returning 1 stops libtiff from calling its global handlers. */
static int error_handler(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif; (void)module;
    struct kiln_tiff_file *file = user;
    if (file && file->error[0] == 0) vsnprintf(file->error, sizeof file->error, format, args);
    return 1;
}

static int warning_handler(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif; (void)user; (void)module; (void)format; (void)args;
    return 1;
}

kiln_tiff_file *kiln_tiff_open(const uint8_t *data, size_t size, int64_t max_alloc, char *error, size_t error_size) {
    if (error_size) error[0] = 0;
    if (!kiln_tiff_available()) {
        snprintf(error, error_size, "libtiff is not installed");
        return NULL;
    }
    struct kiln_tiff_file *file = calloc(1, sizeof *file);
    if (!file) return NULL;
    file->data = data;
    file->size = size;
    TIFFOpenOptions *options = api.TIFFOpenOptionsAlloc();
    if (!options) { free(file); return NULL; }
    api.TIFFOpenOptionsSetMaxSingleMemAlloc(options, max_alloc);
    api.TIFFOpenOptionsSetErrorHandlerExtR(options, error_handler, file);
    api.TIFFOpenOptionsSetWarningHandlerExtR(options, warning_handler, file);
    /* "m": no memory mapping, libtiff reads through read_proc (it never writes to our bytes). */
    file->tif = api.TIFFClientOpenExt("memory", "rm", file, read_proc, write_proc, seek_proc, close_proc,
                                      size_proc, map_proc, unmap_proc, options);
    api.TIFFOpenOptionsFree(options);
    if (!file->tif) {
        snprintf(error, error_size, "%s", file->error[0] ? file->error : "not a TIFF");
        free(file);
        return NULL;
    }
    return file;
}

void kiln_tiff_close(kiln_tiff_file *file) {
    if (file->tif) api.TIFFClose(file->tif);
    free(file);
}

const char *kiln_tiff_error(const kiln_tiff_file *file) { return file->error; }

int kiln_tiff_read_info(kiln_tiff_file *file, uint32_t directory, kiln_tiff_info *info) {
    TIFF *tif = file->tif;
    memset(info, 0, sizeof *info);
    if (api.TIFFCurrentDirectory(tif) != directory && !api.TIFFSetDirectory(tif, directory)) return 0;
    uint32_t width = 0, height = 0;
    if (!api.TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &width) || !api.TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &height)) {
        if (!file->error[0]) snprintf(file->error, sizeof file->error, "no image width or length");
        return 0;
    }
    info->width = width;
    info->height = height;
    uint16_t spp = 1, bps = 1, photometric = 0, compression = 1, orientation = 1;
    api.TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    api.TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
    api.TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    if (!api.TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) photometric = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    if (!api.TIFFGetField(tif, TIFFTAG_ORIENTATION, &orientation)) orientation = 1;
    info->samples_per_pixel = spp;
    info->bits_per_sample = bps;
    info->photometric = photometric;
    info->compression = compression;
    info->orientation = orientation;
    /* As TIFFRGBAImageBegin decides: the first extra sample is alpha when associated or
     * unassociated, or unspecified in a file of more than three samples. */
    uint16_t extra = 0;
    uint16_t *kinds = NULL;
    api.TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extra, &kinds);
    if (extra >= 1 && kinds) {
        info->has_alpha = kinds[0] == EXTRASAMPLE_ASSOCALPHA || kinds[0] == EXTRASAMPLE_UNASSALPHA
                          || (kinds[0] == EXTRASAMPLE_UNSPECIFIED && spp > 3);
    }
    info->tiled = api.TIFFIsTiled(tif) ? 1 : 0;
    if (info->tiled) {
        uint32_t tw = 0, th = 0;
        api.TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
        api.TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
        info->tile_width = tw;
        info->tile_height = th;
    } else {
        uint32_t rows = 0;
        api.TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows);
        info->rows_per_strip = rows;
    }
    uint32_t icc_size = 0;
    void *icc = NULL;
    if (api.TIFFGetField(tif, TIFFTAG_ICCPROFILE, &icc_size, &icc) && icc) info->icc_size = icc_size;
    return 1;
}

size_t kiln_tiff_icc(kiln_tiff_file *file, uint8_t *out, size_t capacity) {
    uint32_t size = 0;
    void *icc = NULL;
    if (!api.TIFFGetField(file->tif, TIFFTAG_ICCPROFILE, &size, &icc) || !icc) return 0;
    if (out) memcpy(out, icc, size < capacity ? size : capacity);
    return size;
}

int kiln_tiff_read_rgba(kiln_tiff_file *file, uint32_t *raster, uint32_t width, uint32_t height, int *alpha) {
    char message[1024] = {0};
    TIFFRGBAImage image;
    *alpha = 0;
    if (!api.TIFFRGBAImageOK(file->tif, message) || !api.TIFFRGBAImageBegin(&image, file->tif, 1, message)) {
        if (!file->error[0]) snprintf(file->error, sizeof file->error, "%s", message[0] ? message : "cannot be read as RGBA");
        return 0;
    }
    /* The stored rows, top first: asking for the file's own orientation makes libtiff flip nothing. */
    image.req_orientation = image.orientation;
    int ok = image.width == width && image.height == height && api.TIFFRGBAImageGet(&image, raster, width, height);
    *alpha = image.alpha == EXTRASAMPLE_ASSOCALPHA ? 1 : image.alpha == EXTRASAMPLE_UNASSALPHA ? 2 : 0;
    api.TIFFRGBAImageEnd(&image);
    if (!ok && !file->error[0]) snprintf(file->error, sizeof file->error, "image data cannot be read");
    return ok;
}
