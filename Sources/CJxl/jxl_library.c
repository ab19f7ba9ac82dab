#include "kiln_jxl.h"
int kiln_jxl_available(void) { return 0; }
