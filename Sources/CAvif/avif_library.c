#define _GNU_SOURCE
#include "kiln_avif.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static kiln_avif_api api;
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *lib = dlopen("libavif.so.15", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    if (!(*(void **)&api.avifCodecName = dlsym(lib, "avifCodecName"))) return;
    if (!(*(void **)&api.avifCodecVersions = dlsym(lib, "avifCodecVersions"))) return;
    if (!(*(void **)&api.avifDecoderCreate = dlsym(lib, "avifDecoderCreate"))) return;
    if (!(*(void **)&api.avifDecoderDestroy = dlsym(lib, "avifDecoderDestroy"))) return;
    if (!(*(void **)&api.avifDecoderNextImage = dlsym(lib, "avifDecoderNextImage"))) return;
    if (!(*(void **)&api.avifDecoderParse = dlsym(lib, "avifDecoderParse"))) return;
    if (!(*(void **)&api.avifDecoderSetIOMemory = dlsym(lib, "avifDecoderSetIOMemory"))) return;
    if (!(*(void **)&api.avifEncoderCreate = dlsym(lib, "avifEncoderCreate"))) return;
    if (!(*(void **)&api.avifEncoderDestroy = dlsym(lib, "avifEncoderDestroy"))) return;
    if (!(*(void **)&api.avifEncoderWrite = dlsym(lib, "avifEncoderWrite"))) return;
    if (!(*(void **)&api.avifEncoderAddImage = dlsym(lib, "avifEncoderAddImage"))) return;
    if (!(*(void **)&api.avifEncoderFinish = dlsym(lib, "avifEncoderFinish"))) return;
    if (!(*(void **)&api.avifImageCreate = dlsym(lib, "avifImageCreate"))) return;
    if (!(*(void **)&api.avifImageDestroy = dlsym(lib, "avifImageDestroy"))) return;
    if (!(*(void **)&api.avifImageRGBToYUV = dlsym(lib, "avifImageRGBToYUV"))) return;
    if (!(*(void **)&api.avifImageSetMetadataExif = dlsym(lib, "avifImageSetMetadataExif"))) return;
    if (!(*(void **)&api.avifImageSetMetadataXMP = dlsym(lib, "avifImageSetMetadataXMP"))) return;
    if (!(*(void **)&api.avifImageSetProfileICC = dlsym(lib, "avifImageSetProfileICC"))) return;
    if (!(*(void **)&api.avifImageYUVToRGB = dlsym(lib, "avifImageYUVToRGB"))) return;
    if (!(*(void **)&api.avifRGBImageSetDefaults = dlsym(lib, "avifRGBImageSetDefaults"))) return;
    if (!(*(void **)&api.avifRWDataFree = dlsym(lib, "avifRWDataFree"))) return;
    if (!(*(void **)&api.avifResultToString = dlsym(lib, "avifResultToString"))) return;
    loaded = 1;
}

const kiln_avif_api *kiln_avif_library(void) {
    pthread_once(&once, load);
    return loaded ? &api : NULL;
}
