#define _GNU_SOURCE
#include "kiln_jxl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static kiln_jxl_api api;
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LOAD(name) if (!(*(void **)&api.name = dlsym(lib, #name))) return

static void load(void) {
    void *lib = dlopen("libjxl.so.0.7", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    LOAD(JxlDecoderCreate);
    LOAD(JxlDecoderDestroy);
    LOAD(JxlDecoderSubscribeEvents);
    LOAD(JxlDecoderSetKeepOrientation);
    LOAD(JxlDecoderSetDecompressBoxes);
    LOAD(JxlDecoderSetUnpremultiplyAlpha);
    LOAD(JxlDecoderSetInput);
    LOAD(JxlDecoderCloseInput);
    LOAD(JxlDecoderProcessInput);
    LOAD(JxlDecoderGetBasicInfo);
    LOAD(JxlDecoderGetColorAsEncodedProfile);
    LOAD(JxlDecoderGetICCProfileSize);
    LOAD(JxlDecoderGetColorAsICCProfile);
    LOAD(JxlDecoderImageOutBufferSize);
    LOAD(JxlDecoderSetImageOutBuffer);
    loaded = 1;
}

const kiln_jxl_api *kiln_jxl_library(void) {
    pthread_once(&once, load);
    return loaded ? &api : NULL;
}
