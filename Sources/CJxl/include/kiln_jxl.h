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

/* libjxl 0.7 prints every failure to stderr (JXL_FAILURE and JXL_API_ERROR call jxl::Debug, which
 * Debian's build keeps), and no API turns that off. On loading, the shim points libjxl's (and
 * libhwy's) own reference to `stderr` (their GOT entry, R_*_GLOB_DAT) at a FILE that discards what
 * is written (fopencookie): their messages vanish, everyone else's stderr is untouched.
 * kiln_jxl_is_quiet() says whether that worked (x86-64 and AArch64 Linux). */
int kiln_jxl_is_quiet(void);

/* The functions, or NULL when libjxl.so.0.7 (or one of its symbols) is missing. Thread-safe; loads once. */
const kiln_jxl_api *_Nullable kiln_jxl_library(void);

#endif
