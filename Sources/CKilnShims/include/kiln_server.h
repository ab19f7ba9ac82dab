#ifndef KILN_SERVER_H
#define KILN_SERVER_H
#include <spawn.h>
/* Fixed-arity helpers for the server process layer (master and workers): signal flags that Swift 6
 * cannot hold safely, and wait-status macros that Swift's Glibc module does not import. */

/* Worker stop handling. Installs one handler for SIGTERM, SIGINT and SIGQUIT (SA_RESTART) that
 * sets the stop flag and dup2()s /dev/null onto fd 0, the FastCGI listening socket. A worker
 * blocked in accept(0) is interrupted, the kernel restarts accept, and the restarted call fails
 * at once with ENOTSOCK; a signal that arrives just before accept makes that accept fail the same
 * way, so no wake-up is lost. Every other interrupted call (reads and writes of the request in
 * flight) is restarted, so the current request finishes intact. Returns 0 or -1/errno. */
int kiln_install_stop_handler(void);

/* 1 once a stop signal arrived in this process, else 0. */
int kiln_stop_requested(void);

/* The signal that set the stop flag, 0 if none. */
int kiln_stop_signal(void);

/* signal(sig, SIG_IGN) without the macro. Returns 0 or -1/errno. */
int kiln_ignore_signal(int sig);

/* 1 if fd is a socket in the listening state (SO_ACCEPTCONN), else 0. */
int kiln_is_listening_socket(int fd);

/* waitpid() status decoding (the W* macros). */
int kiln_wifexited(int status);
int kiln_wexitstatus(int status);
int kiln_wifsignaled(int status);
int kiln_wtermsig(int status);
int kiln_wcoredump(int status);

/* CPUs this process may run on (sched_getaffinity, so cpusets and taskset count), at least 1. */
int kiln_available_cpus(void);

/* memfd_create("kiln-settings", MFD_CLOEXEC | MFD_ALLOW_SEALING), moved to fd 4 or above.
 * Returns the fd or -1/errno. */
int kiln_settings_memfd(void);

/* Seals a memfd against any further change (F_SEAL_WRITE, _GROW, _SHRINK, _SEAL). */
int kiln_seal(int fd);

/* posix_spawn_file_actions_addclosefrom_np(actions, from): the child closes every descriptor >= from
 * that the spawning process happened to inherit. Returns 0 or an error number. */
int kiln_spawn_closefrom(posix_spawn_file_actions_t *actions, int from);

/* The process environment (environ), for posix_spawn. */
char *const *kiln_environ(void);

#endif
