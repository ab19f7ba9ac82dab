#ifndef KILN_PROCESS_H
#define KILN_PROCESS_H
/* Fixed-arity wrappers over calls Swift cannot make directly (variadic, missing from Glibc). */

/* prctl(PR_SET_PDEATHSIG, sig): the kernel sends sig when the parent dies. Returns 0 or -1/errno. */
int kiln_set_parent_death_signal(int sig);

#endif
