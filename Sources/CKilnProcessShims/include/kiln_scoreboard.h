#ifndef KILN_SCOREBOARD_H
#define KILN_SCOREBOARD_H
#include <stddef.h>
#include <stdint.h>
/* The scoreboard (php-fpm's): a shared memory table the master creates (a memfd, mapped by every
 * worker from the fd it inherits) where each worker publishes what it is doing: the request's
 * URI, when it started, which stage it is in. The master reads it to kill a worker past its
 * render deadline, to log slow requests with their stage, to see whether every worker is busy
 * (back-pressure) and for the status page.
 *
 * One slot per worker, written only by that worker (and cleared by the master before it starts
 * the next worker in the slot). Numbers are C11 atomics; the URI and detail texts are guarded by
 * a sequence counter (a seqlock): a reader copies the slot and retries while a write was in
 * progress. Times are CLOCK_MONOTONIC nanoseconds, the same clock in every process. */

#define KILN_SB_URI_BYTES 320
#define KILN_SB_DETAIL_BYTES 64
/* The request id of the logs (nginx's $request_id: 32 hex digits; longer ids are cut). */
#define KILN_SB_TRACE_BYTES 64
/* Counters per slot (the worker's metrics, added up by the master) and shared values of the
 * whole board (gauges any worker may set, such as the disk cache's size after a sweep). */
#define KILN_SB_CELLS 256
#define KILN_SB_GLOBALS 16

/* A consistent copy of one slot. `stage` 0 is idle (between requests), `request_start_ns` 0 when
 * no request is in progress. `request_id` counts the requests the slot's worker began. */
typedef struct {
    int32_t pid;
    uint32_t stage;
    int64_t request_start_ns;
    int64_t stage_start_ns;
    int64_t idle_since_ns;
    uint64_t request_id;
    uint64_t requests_done;
    char uri[KILN_SB_URI_BYTES];
    char detail[KILN_SB_DETAIL_BYTES];
    char trace[KILN_SB_TRACE_BYTES];
} kiln_sb_view;

/* Master: a new scoreboard of `slots` slots in a sealed-size memfd ("kiln-scoreboard", close-on-exec,
 * moved to fd 5 or above). Returns the mapping or NULL (errno); *fd_out gets the memfd. */
void *kiln_sb_create(int slots, int *fd_out);

/* Worker: maps the scoreboard on `fd`. Returns the mapping or NULL (errno); *slots_out gets the
 * slot count. */
void *kiln_sb_map(int fd, int *slots_out);

/* Slot count of a mapping. */
int kiln_sb_slots(const void *board);

/* Master, before starting a worker in `slot`: clears it and records `pid` (0 if not known yet). */
void kiln_sb_reset(void *board, int slot, int32_t pid);

/* Worker: a request began (`uri`, `len` bytes, cut to fit; its log request id `trace`,
 * `trace_len` bytes) in `stage`. */
void kiln_sb_begin(void *board, int slot, int32_t pid, const char *uri, size_t len,
                   const char *trace, size_t trace_len, uint32_t stage);

/* Worker: the request entered `stage`; `detail` (may be empty) says more, e.g. the processor. */
void kiln_sb_stage(void *board, int slot, uint32_t stage, const char *detail, size_t len);

/* Worker: moves the request's start `ns` later (time spent waiting for another process's render
 * does not count against the render deadline). */
void kiln_sb_shift_start(void *board, int slot, int64_t ns);

/* Worker: the request is answered; the slot is idle. */
void kiln_sb_end(void *board, int slot);

/* Anyone: a consistent copy of `slot`. Returns 0, or -1 when the slot is out of range. */
int kiln_sb_read(const void *board, int slot, kiln_sb_view *out);

/* Worker: adds `amount` to counter `cell` of its slot (relaxed atomics: counters, not locks). */
void kiln_sb_add(void *board, int slot, int cell, uint64_t amount);

/* Anyone: counter `cell` of `slot`, 0 when out of range. */
uint64_t kiln_sb_cell(const void *board, int slot, int cell);

/* Anyone: sets / reads the board-wide value `index`. */
void kiln_sb_global_set(void *board, int index, uint64_t value);
uint64_t kiln_sb_global(const void *board, int index);
/* Anyone: adds `amount` to the board-wide counter `index` (a relaxed atomic add). */
void kiln_sb_global_add(void *board, int index, uint64_t amount);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t kiln_sb_now(void);

/* Master: accept(fd) that gives up after `timeout_ms` (another process may take the connection
 * between poll and accept; the master must never block). Returns the new close-on-exec fd, or
 * -1 with errno (EAGAIN when nothing came). */
int kiln_accept_within(int fd, int timeout_ms);

/* 1 when the peer of the connected socket `fd` has closed it (POLLHUP, POLLRDHUP or POLLERR),
 * 0 otherwise. Never blocks. */
int kiln_peer_closed(int fd);

#endif
