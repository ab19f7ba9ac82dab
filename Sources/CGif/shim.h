// giflib 5 (Debian's libgif-dev). Debian 12 ships a libgif.pc, older releases none: the module
// map links "gif" directly so the target needs no pkg-config file.
#include <gif_lib.h>
