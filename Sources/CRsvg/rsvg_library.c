#include "kiln_rsvg.h"
int kiln_rsvg_available(void) { return 0; }
