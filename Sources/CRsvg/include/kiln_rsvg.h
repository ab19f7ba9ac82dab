#ifndef KILN_RSVG_H
#define KILN_RSVG_H
int kiln_rsvg_available(void);
#endif
