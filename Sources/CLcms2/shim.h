#include <lcms2.h>

/* lcms2's pixel-format constants are built from function-like macros (COLORSPACE_SH, CHANNELS_SH, ...),
 * which Swift does not import: the ones Kiln uses, as plain constants. */
static const cmsUInt32Number KILN_TYPE_RGB_8 = TYPE_RGB_8;
static const cmsUInt32Number KILN_TYPE_RGBA_8 = TYPE_RGBA_8;
static const cmsUInt32Number KILN_TYPE_GRAY_8 = TYPE_GRAY_8;
static const cmsUInt32Number KILN_TYPE_CMYK_8 = TYPE_CMYK_8;
/* CMYK stored inverted (255 = no ink), as Adobe applications write it in JPEG. */
static const cmsUInt32Number KILN_TYPE_CMYK_8_REV = TYPE_CMYK_8_REV;
