#ifndef KILN_JXL_H
#define KILN_JXL_H
/* libjxl's decoder functions that Kiln calls, loaded on first use (dlopen of libjxl.so.0.7), as
 * CAvif does: a process maps libjxl (and libhwy, libbrotli) only when a request reads JPEG XL.
 * The headers are the system's; nothing links against libjxl. No parallel runner: one thread. */
#include <jxl/decode.h>

#ifndef __clang__
#define _Nonnull
#define _Nullable
#endif

typedef struct {
    __typeof__(JxlDecoderCreate) *_Nonnull JxlDecoderCreate;
    __typeof__(JxlDecoderDestroy) *_Nonnull JxlDecoderDestroy;
    __typeof__(JxlDecoderSubscribeEvents) *_Nonnull JxlDecoderSubscribeEvents;
    __typeof__(JxlDecoderSetKeepOrientation) *_Nonnull JxlDecoderSetKeepOrientation;
    __typeof__(JxlDecoderSetDecompressBoxes) *_Nonnull JxlDecoderSetDecompressBoxes;
    __typeof__(JxlDecoderSetUnpremultiplyAlpha) *_Nonnull JxlDecoderSetUnpremultiplyAlpha;
    __typeof__(JxlDecoderSetInput) *_Nonnull JxlDecoderSetInput;
    __typeof__(JxlDecoderCloseInput) *_Nonnull JxlDecoderCloseInput;
    __typeof__(JxlDecoderProcessInput) *_Nonnull JxlDecoderProcessInput;
    __typeof__(JxlDecoderGetBasicInfo) *_Nonnull JxlDecoderGetBasicInfo;
    __typeof__(JxlDecoderGetColorAsEncodedProfile) *_Nonnull JxlDecoderGetColorAsEncodedProfile;
    __typeof__(JxlDecoderGetICCProfileSize) *_Nonnull JxlDecoderGetICCProfileSize;
    __typeof__(JxlDecoderGetColorAsICCProfile) *_Nonnull JxlDecoderGetColorAsICCProfile;
    __typeof__(JxlDecoderImageOutBufferSize) *_Nonnull JxlDecoderImageOutBufferSize;
    __typeof__(JxlDecoderSetImageOutBuffer) *_Nonnull JxlDecoderSetImageOutBuffer;
} kiln_jxl_api;

/* The functions, or NULL when libjxl.so.0.7 (or one of its symbols) is missing. Thread-safe; loads once. */
const kiln_jxl_api *_Nullable kiln_jxl_library(void);

#endif
