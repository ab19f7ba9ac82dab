#define _GNU_SOURCE
#include "kiln_scoreboard.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define KILN_SB_MAGIC 0x4b534232u /* "KSB2" */

typedef struct {
    _Atomic uint32_t seq;
    _Atomic int32_t pid;
    _Atomic uint32_t stage;
    uint32_t unused;
    _Atomic int64_t request_start_ns;
    _Atomic int64_t stage_start_ns;
    _Atomic int64_t idle_since_ns;
    _Atomic uint64_t request_id;
    _Atomic uint64_t requests_done;
    char uri[KILN_SB_URI_BYTES];
    char detail[KILN_SB_DETAIL_BYTES];
    char trace[KILN_SB_TRACE_BYTES];
    _Atomic uint64_t cells[KILN_SB_CELLS];
} kiln_sb_slot;

typedef struct {
    uint32_t magic;
    uint32_t slots;
    uint64_t reserved[7];
    _Atomic uint64_t globals[KILN_SB_GLOBALS];
    kiln_sb_slot slot[];
} kiln_sb_header;

int64_t kiln_sb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static size_t board_size(int slots) { return sizeof(kiln_sb_header) + (size_t)slots * sizeof(kiln_sb_slot); }

void *kiln_sb_create(int slots, int *fd_out) {
    if (slots < 1) { errno = EINVAL; return NULL; }
    int fd = memfd_create("kiln-scoreboard", MFD_CLOEXEC);
    if (fd < 0) return NULL;
    if (fd < 5) {
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, 5);
        int saved = errno;
        close(fd);
        if (moved < 0) { errno = saved; return NULL; }
        fd = moved;
    }
    size_t size = board_size(slots);
    if (ftruncate(fd, (off_t)size) != 0) { int e = errno; close(fd); errno = e; return NULL; }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { int e = errno; close(fd); errno = e; return NULL; }
    kiln_sb_header *h = p;
    h->magic = KILN_SB_MAGIC;
    h->slots = (uint32_t)slots;
    *fd_out = fd;
    return p;
}

void *kiln_sb_map(int fd, int *slots_out) {
    struct stat st;
    if (fstat(fd, &st) != 0) return NULL;
    if ((size_t)st.st_size < sizeof(kiln_sb_header)) { errno = EINVAL; return NULL; }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return NULL;
    kiln_sb_header *h = p;
    if (h->magic != KILN_SB_MAGIC || board_size((int)h->slots) > (size_t)st.st_size) {
        munmap(p, (size_t)st.st_size);
        errno = EINVAL;
        return NULL;
    }
    *slots_out = (int)h->slots;
    return p;
}

int kiln_sb_slots(const void *board) { return board ? (int)((const kiln_sb_header *)board)->slots : 0; }

static kiln_sb_slot *slot_at(void *board, int slot) {
    kiln_sb_header *h = board;
    if (!h || slot < 0 || (uint32_t)slot >= h->slots) return NULL;
    return &h->slot[slot];
}

static void copy_text(char *dst, size_t cap, const char *src, size_t len) {
    if (len >= cap) len = cap - 1;
    if (len) memcpy(dst, src, len);
    dst[len] = 0;
}

void kiln_sb_reset(void *board, int slot, int32_t pid) {
    kiln_sb_slot *s = slot_at(board, slot);
    if (!s) return;
    atomic_fetch_add(&s->seq, 1);
    atomic_store(&s->pid, pid);
    atomic_store(&s->stage, 0);
    atomic_store(&s->request_start_ns, 0);
    atomic_store(&s->stage_start_ns, 0);
    atomic_store(&s->idle_since_ns, kiln_sb_now());
    atomic_store(&s->request_id, 0);
    atomic_store(&s->requests_done, 0);
    s->uri[0] = 0;
    s->detail[0] = 0;
    s->trace[0] = 0;
    for (int i = 0; i < KILN_SB_CELLS; i++) atomic_store_explicit(&s->cells[i], 0, memory_order_relaxed);
    atomic_fetch_add(&s->seq, 1);
}

void kiln_sb_add(void *board, int slot, int cell, uint64_t amount) {
    kiln_sb_slot *s = slot_at(board, slot);
    if (!s || cell < 0 || cell >= KILN_SB_CELLS) return;
    atomic_fetch_add_explicit(&s->cells[cell], amount, memory_order_relaxed);
}

uint64_t kiln_sb_cell(const void *board, int slot, int cell) {
    kiln_sb_slot *s = slot_at((void *)board, slot);
    if (!s || cell < 0 || cell >= KILN_SB_CELLS) return 0;
    return atomic_load_explicit(&s->cells[cell], memory_order_relaxed);
}

void kiln_sb_global_set(void *board, int index, uint64_t value) {
    kiln_sb_header *h = board;
    if (!h || index < 0 || index >= KILN_SB_GLOBALS) return;
    atomic_store_explicit(&h->globals[index], value, memory_order_relaxed);
}

void kiln_sb_global_add(void *board, int index, uint64_t amount) {
    kiln_sb_header *h = board;
    if (!h || index < 0 || index >= KILN_SB_GLOBALS) return;
    atomic_fetch_add_explicit(&h->globals[index], amount, memory_order_relaxed);
}

uint64_t kiln_sb_global(const void *board, int index) {
    const kiln_sb_header *h = board;
    if (!h || index < 0 || index >= KILN_SB_GLOBALS) return 0;
    return atomic_load_explicit((_Atomic uint64_t *)&h->globals[index], memory_order_relaxed);
}

void kiln_sb_begin(void *board, int slot, int32_t pid, const char *uri, size_t len,
                   const char *trace, size_t trace_len, uint32_t stage) {
    kiln_sb_slot *s = slot_at(board, slot);
    if (!s) return;
    int64_t now = kiln_sb_now();
    atomic_fetch_add(&s->seq, 1);
    atomic_store(&s->pid, pid);
    copy_text(s->uri, sizeof s->uri, uri, len);
    copy_text(s->trace, sizeof s->trace, trace, trace_len);
    s->detail[0] = 0;
    atomic_store(&s->stage, stage);
    atomic_store(&s->stage_start_ns, now);
    atomic_store(&s->request_start_ns, now);
    atomic_fetch_add(&s->request_id, 1);
    atomic_fetch_add(&s->seq, 1);
}

void kiln_sb_stage(void *board, int slot, uint32_t stage, const char *detail, size_t len) {
    kiln_sb_slot *s = slot_at(board, slot);
    if (!s) return;
    atomic_fetch_add(&s->seq, 1);
    copy_text(s->detail, sizeof s->detail, detail, len);
    atomic_store(&s->stage, stage);
    atomic_store(&s->stage_start_ns, kiln_sb_now());
    atomic_fetch_add(&s->seq, 1);
}

void kiln_sb_shift_start(void *board, int slot, int64_t ns) {
    kiln_sb_slot *s = slot_at(board, slot);
    if (!s || ns <= 0) return;
    atomic_fetch_add(&s->request_start_ns, ns);
}

void kiln_sb_end(void *board, int slot) {
    kiln_sb_slot *s = slot_at(board, slot);
    if (!s) return;
    int64_t now = kiln_sb_now();
    atomic_fetch_add(&s->seq, 1);
    atomic_store(&s->stage, 0);
    atomic_store(&s->request_start_ns, 0);
    atomic_store(&s->stage_start_ns, now);
    atomic_store(&s->idle_since_ns, now);
    atomic_fetch_add(&s->requests_done, 1);
    s->detail[0] = 0;
    atomic_fetch_add(&s->seq, 1);
}

int kiln_sb_read(const void *board, int slot, kiln_sb_view *out) {
    kiln_sb_slot *s = slot_at((void *)board, slot);
    if (!s) return -1;
    for (int attempt = 0; attempt < 1000; attempt++) {
        uint32_t before = atomic_load(&s->seq);
        if (before & 1) { sched_yield(); continue; }
        out->pid = atomic_load(&s->pid);
        out->stage = atomic_load(&s->stage);
        out->request_start_ns = atomic_load(&s->request_start_ns);
        out->stage_start_ns = atomic_load(&s->stage_start_ns);
        out->idle_since_ns = atomic_load(&s->idle_since_ns);
        out->request_id = atomic_load(&s->request_id);
        out->requests_done = atomic_load(&s->requests_done);
        memcpy(out->uri, s->uri, sizeof out->uri);
        memcpy(out->detail, s->detail, sizeof out->detail);
        memcpy(out->trace, s->trace, sizeof out->trace);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load(&s->seq) == before) break;
    }
    out->uri[sizeof out->uri - 1] = 0;
    out->detail[sizeof out->detail - 1] = 0;
    out->trace[sizeof out->trace - 1] = 0;
    return 0;
}

static void on_alarm(int sig) { (void)sig; }

int kiln_accept_within(int fd, int timeout_ms) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: accept returns EINTR */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, &old) != 0) return -1;
    sigset_t unblock, saved;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &unblock, &saved);
    struct itimerval t;
    memset(&t, 0, sizeof t);
    t.it_value.tv_sec = timeout_ms / 1000;
    t.it_value.tv_usec = (timeout_ms % 1000) * 1000;
    if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1000;
    setitimer(ITIMER_REAL, &t, NULL);
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    int e = errno;
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
    sigprocmask(SIG_SETMASK, &saved, NULL);
    sigaction(SIGALRM, &old, NULL);
    if (c < 0) errno = (e == EINTR) ? EAGAIN : e;
    return c;
}

int kiln_peer_closed(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLRDHUP, .revents = 0};
    int n = poll(&p, 1, 0);
    if (n <= 0) return 0;
    return (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) ? 1 : 0;
}
