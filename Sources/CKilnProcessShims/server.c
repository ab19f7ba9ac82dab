#define _GNU_SOURCE
#include "kiln_server.h"
#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <linux/rtnetlink.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t stop_flag = 0;
static volatile sig_atomic_t stop_signal = 0;
static volatile sig_atomic_t handover_flag = 0;
static volatile time_t stop_sec = 0;
static volatile long stop_nsec = 0;
static int devnull_fd = -1;
static int drain_fd = -1;

#define KILN_HANDOVER_MARK 0x4b484f /* "KHO" */

static void on_stop(int sig, siginfo_t *info, void *context) {
    int saved = errno;
    (void)context;
    int handover = info != 0 && info->si_code == SI_QUEUE && info->si_value.sival_int == KILN_HANDOVER_MARK;
    /* A plain stop signal after a hand-over means there is no next generation: drain after all. */
    if (stop_flag == 0) handover_flag = handover ? 1 : 0;
    else if (!handover) handover_flag = 0;
    if (stop_flag == 0) {
        struct timespec ts; /* clock_gettime is async-signal-safe */
        if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0) {
            stop_sec = ts.tv_sec;
            stop_nsec = ts.tv_nsec;
        }
    }
    stop_flag = 1;
    if (stop_signal == 0) stop_signal = sig;
    /* Async-signal-safe: replaces the listening socket on fd 0 so the next (or the restarted)
     * accept(0) fails with ENOTSOCK. The connection of a request in flight is another fd. */
    if (devnull_fd >= 0) dup2(devnull_fd, 0);
    errno = saved;
}

int kiln_install_stop_handler(void) {
    if (devnull_fd < 0) {
        /* First call: no handler yet, so fd 0 is still what the master gave us. */
        if (drain_fd < 0 && kiln_is_listening_socket(0)) drain_fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
        devnull_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (devnull_fd < 0) return -1;
        /* Keep it away from 0..2 so dup2 never targets itself. */
        if (devnull_fd < 3) {
            int moved = fcntl(devnull_fd, F_DUPFD_CLOEXEC, 3);
            close(devnull_fd);
            devnull_fd = moved;
            if (devnull_fd < 0) return -1;
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_stop;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGQUIT);
    if (sigaction(SIGTERM, &sa, 0) != 0) return -1;
    if (sigaction(SIGINT, &sa, 0) != 0) return -1;
    if (sigaction(SIGQUIT, &sa, 0) != 0) return -1;
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGTERM);
    sigaddset(&unblock, SIGINT);
    sigaddset(&unblock, SIGQUIT);
    return sigprocmask(SIG_UNBLOCK, &unblock, 0);
}

int kiln_stop_requested(void) { return stop_flag ? 1 : 0; }

int kiln_stop_signal(void) { return stop_signal; }

int kiln_stop_is_handover(void) { return stop_flag && handover_flag ? 1 : 0; }

int kiln_drain_fd(void) { return drain_fd; }

double kiln_stop_time(void) { return stop_flag ? (double)stop_sec + (double)stop_nsec / 1e9 : 0; }

int kiln_send_handover(int pid) {
    union sigval value;
    value.sival_int = KILN_HANDOVER_MARK;
    return sigqueue(pid, SIGTERM, value);
}

int kiln_ignore_signal(int sig) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, 0);
}

int kiln_is_listening_socket(int fd) {
    int accepting = 0;
    socklen_t len = sizeof accepting;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0) return 0;
    return accepting ? 1 : 0;
}

int kiln_wifexited(int status) { return WIFEXITED(status); }
int kiln_wexitstatus(int status) { return WEXITSTATUS(status); }
int kiln_wifsignaled(int status) { return WIFSIGNALED(status); }
int kiln_wtermsig(int status) { return WTERMSIG(status); }
int kiln_wcoredump(int status) { return WCOREDUMP(status); }

int kiln_available_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int kiln_settings_memfd(void) {
    int fd = memfd_create("kiln-settings", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    if (fd < 4) {
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, 4);
        int saved = errno;
        close(fd);
        errno = saved;
        return moved;
    }
    return fd;
}

int kiln_shared_memfd(const char *name, int above) {
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0 || fd > above) return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, above + 1);
    int saved = errno;
    close(fd);
    errno = saved;
    return moved;
}

int kiln_seal(int fd) {
    return fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
}

int kiln_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

char *const *kiln_environ(void) { return environ; }

int kiln_peer_address(int fd, unsigned char out[16]) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    memset(&ss, 0, sizeof ss);
    if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0) return -1;
    if (ss.ss_family == AF_INET) {
        memcpy(out, &((struct sockaddr_in *)&ss)->sin_addr, 4);
        return 4;
    }
    if (ss.ss_family == AF_INET6) {
        const unsigned char *a = ((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr;
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(a, mapped, 12) == 0) {
            memcpy(out, a + 12, 4);
            return 4;
        }
        memcpy(out, a, 16);
        return 16;
    }
    return 0;
}

/* Asks sock_diag about one unix socket by inode (not a dump): its UNIX_DIAG_RQLEN attribute holds
 * the accept queue's length for a listener (sk_ack_backlog). */
static long unix_listen_queue_length(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0) return -1;
    struct {
        struct nlmsghdr nlh;
        struct unix_diag_req req;
    } msg;
    memset(&msg, 0, sizeof msg);
    msg.nlh.nlmsg_len = sizeof msg;
    msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    msg.nlh.nlmsg_flags = NLM_F_REQUEST;
    msg.req.sdiag_family = AF_UNIX;
    msg.req.udiag_states = 1u << 10; /* TCP_LISTEN */
    msg.req.udiag_ino = (unsigned int)st.st_ino;
    msg.req.udiag_show = UDIAG_SHOW_RQLEN;
    msg.req.udiag_cookie[0] = ~0u; /* INET_DIAG_NOCOOKIE */
    msg.req.udiag_cookie[1] = ~0u;
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.nl_family = AF_NETLINK;
    long result = -1;
    if (sendto(nl, &msg, sizeof msg, 0, (struct sockaddr *)&kernel, sizeof kernel) == (ssize_t)sizeof msg) {
        long buf[1024 / sizeof(long)];
        ssize_t n = recv(nl, buf, sizeof buf, 0);
        struct nlmsghdr *h = (struct nlmsghdr *)buf;
        if (n > 0 && NLMSG_OK(h, (unsigned int)n)) {
            if (h->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *err = NLMSG_DATA(h);
                errno = err->error < 0 ? -err->error : EINVAL;
            } else if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
                struct unix_diag_msg *m = NLMSG_DATA(h);
                int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof *m);
                for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
                    if (a->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(a) >= sizeof(struct unix_diag_rqlen)) {
                        struct unix_diag_rqlen *q = RTA_DATA(a);
                        result = (long)q->udiag_rqueue;
                    }
                }
                if (result < 0) errno = ENOENT;
            } else {
                errno = EPROTO;
            }
        }
    }
    int saved = errno;
    close(nl);
    errno = saved;
    return result;
}

long kiln_listen_queue_length(int fd) {
    struct sockaddr_storage address;
    socklen_t len = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &len) != 0) return -1;
    if (address.ss_family == AF_INET || address.ss_family == AF_INET6) {
        struct tcp_info info;
        socklen_t size = sizeof info;
        memset(&info, 0, sizeof info);
        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return -1;
        return (long)info.tcpi_unacked;
    }
    if (address.ss_family == AF_UNIX) return unix_listen_queue_length(fd);
    errno = EAFNOSUPPORT;
    return -1;
}
