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
 * flight) is restarted, so the current request finishes intact. Returns 0 or -1/errno.
 *
 * The first call also keeps a close-on-exec copy of fd 0 when it is a listening socket (before
 * any handler can replace it): `kiln_drain_fd`, so a stopping worker can still accept the
 * connections already queued. */
int kiln_install_stop_handler(void);

/* 1 once a stop signal arrived in this process, else 0. */
int kiln_stop_requested(void);

/* The signal that set the stop flag, 0 if none. */
int kiln_stop_signal(void);

/* 1 when every stop signal so far was a hand-over (`kiln_send_handover`): the next generation of
 * workers takes the queued connections, so this worker does not drain the queue. 0 otherwise
 * (a plain kill, the parent-death signal, or no signal yet). */
int kiln_stop_is_handover(void);

/* CLOCK_MONOTONIC seconds when the first stop signal arrived, 0 if none. */
double kiln_stop_time(void);

/* The copy of the listening socket kept by `kiln_install_stop_handler`, or -1. */
int kiln_drain_fd(void);

/* sigqueue(pid, SIGTERM) with the hand-over marker (reload: the old generation leaves the queue
 * to the new one). Returns 0 or -1/errno. */
int kiln_send_handover(int pid);

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
/* A memfd called `name`, close-on-exec, at a descriptor above `above` (so dup2 to `above` never
 * targets itself); -1 and errno on failure. */
int kiln_shared_memfd(const char *name, int above);

/* Seals a memfd against any further change (F_SEAL_WRITE, _GROW, _SHRINK, _SEAL). */
int kiln_seal(int fd);

/* posix_spawn_file_actions_addclosefrom_np(actions, from): the child closes every descriptor >= from
 * that the spawning process happened to inherit. Returns 0 or an error number. */
int kiln_spawn_closefrom(posix_spawn_file_actions_t *actions, int from);

/* The process environment (environ), for posix_spawn. */
char *const *kiln_environ(void);

/* The address of the peer of the connected socket fd (getpeername): writes 4 bytes (IPv4,
 * also for an IPv4-mapped IPv6 peer such as ::ffff:10.0.0.1) or 16 bytes (IPv6) to `out` and
 * returns their count; 0 for a unix socket (no address); -1/errno on failure. */
int kiln_peer_address(int fd, unsigned char out[16]);

/* Connections waiting in the accept queue of the listening socket `fd`: TCP_INFO's tcpi_unacked
 * for a TCP listener, the sock_diag (netlink) UNIX_DIAG_RQLEN of a unix one. -1 when the kernel
 * does not say (errno set). */
long kiln_listen_queue_length(int fd);

#endif
