#include "kiln_process.h"
#include <sys/prctl.h>

int kiln_set_parent_death_signal(int sig) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)sig, 0, 0, 0);
}
