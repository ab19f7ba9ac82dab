#ifndef KILN_AVIF_H
#define KILN_AVIF_H
/* libavif's functions that Kiln calls, loaded on first use (dlopen of libavif.so.15): a server never
 * maps libavif and the codec libraries it pulls in (about fifteen) until a request needs them, which
 * keeps every process's idle memory small (issue 15). The headers are the system's; nothing links
 * against libavif. */
#include <avif/avif.h>

#ifndef __clang__
#define _Nonnull
#define _Nullable
#endif

typedef struct {
    __typeof__(avifCodecName) *_Nonnull avifCodecName;
    __typeof__(avifCodecVersions) *_Nonnull avifCodecVersions;
    __typeof__(avifDecoderCreate) *_Nonnull avifDecoderCreate;
    __typeof__(avifDecoderDestroy) *_Nonnull avifDecoderDestroy;
    __typeof__(avifDecoderNextImage) *_Nonnull avifDecoderNextImage;
    __typeof__(avifDecoderParse) *_Nonnull avifDecoderParse;
    __typeof__(avifDecoderSetIOMemory) *_Nonnull avifDecoderSetIOMemory;
    __typeof__(avifEncoderCreate) *_Nonnull avifEncoderCreate;
    __typeof__(avifEncoderDestroy) *_Nonnull avifEncoderDestroy;
    __typeof__(avifEncoderWrite) *_Nonnull avifEncoderWrite;
    __typeof__(avifEncoderAddImage) *_Nonnull avifEncoderAddImage;
    __typeof__(avifEncoderFinish) *_Nonnull avifEncoderFinish;
    __typeof__(avifImageCreate) *_Nonnull avifImageCreate;
    __typeof__(avifImageDestroy) *_Nonnull avifImageDestroy;
    __typeof__(avifImageRGBToYUV) *_Nonnull avifImageRGBToYUV;
    __typeof__(avifImageSetMetadataExif) *_Nonnull avifImageSetMetadataExif;
    __typeof__(avifImageSetMetadataXMP) *_Nonnull avifImageSetMetadataXMP;
    __typeof__(avifImageSetProfileICC) *_Nonnull avifImageSetProfileICC;
    __typeof__(avifImageYUVToRGB) *_Nonnull avifImageYUVToRGB;
    __typeof__(avifRGBImageSetDefaults) *_Nonnull avifRGBImageSetDefaults;
    __typeof__(avifRWDataFree) *_Nonnull avifRWDataFree;
    __typeof__(avifResultToString) *_Nonnull avifResultToString;
} kiln_avif_api;

/* The functions, or NULL when libavif.so.15 (or one of its symbols) is missing. Thread-safe; loads once. */
const kiln_avif_api *_Nullable kiln_avif_library(void);

#endif
