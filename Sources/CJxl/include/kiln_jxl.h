#ifndef KILN_JXL_H
#define KILN_JXL_H
/* libjxl's functions that Kiln calls, loaded on first use (dlopen), as CAvif does (to be written). */
int kiln_jxl_available(void);
#endif
