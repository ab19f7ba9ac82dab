#ifndef KILN_TIFF_H
#define KILN_TIFF_H
/* libtiff's functions that Kiln calls, loaded on first use (dlopen), as CAvif does (to be written). */
int kiln_tiff_available(void);
#endif
