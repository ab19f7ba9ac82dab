#include "kiln_tiff.h"
int kiln_tiff_available(void) { return 0; }
