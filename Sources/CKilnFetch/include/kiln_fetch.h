#ifndef KILN_FETCH_H
#define KILN_FETCH_H
#include <stddef.h>
#include <stdint.h>
/* One HTTP(S) request with libcurl: GETs of origin sources, and the shared result store's GET, PUT,
 * DELETE and list calls (any method, an optional request body, the response's user metadata). libcurl is loaded on first use (dlopen of
 * libcurl.so.4), so a server without remote origins never maps it and its dependencies.
 *
 * Every connection's address goes through `check` before the socket is made (after DNS, after
 * each redirect): non-zero refuses it. Only http and https, also for redirects; no proxy from the
 * environment; the body is kept in memory up to `max_bytes`.
 *
 * When a transfer breaks after the headers (a connection cut mid-body, a time-out), the outcome
 * says so but `status`, the validators, `content_range` and the bytes that did arrive stay in
 * `result`: the caller may keep them and ask for the rest later (`Range` + `If-Range`). */

typedef int (*kiln_fetch_address_check)(void *context, const unsigned char *address, int length);

typedef struct {
    const char *url;
    long connect_timeout_ms;
    long timeout_ms;
    long max_redirects;
    long long max_bytes;
    /* Extra request header lines ("Name: value"), e.g. conditions, Range, S3's signature. */
    const char *const *headers;
    int header_count;
    kiln_fetch_address_check check;
    void *check_context;
    /* Abandon (KILN_FETCH_TIMEOUT) a body that arrives slower than `low_speed_limit` bytes a
     * second over `low_speed_time` seconds, counted from the end of the response's headers (the
     * wait for them is `timeout_ms`'s); 0: no such limit. */
    long low_speed_limit;
    long low_speed_time;
    /* NULL or "GET": a GET. "HEAD" asks for no body; any other method is sent as it is. */
    const char *method;
    /* The request body (a PUT's object), sent as it is; NULL with body_length 0: none. */
    const unsigned char *body;
    size_t body_length;
} kiln_fetch_request;

enum {
    KILN_FETCH_OK = 0,             /* an HTTP answer (any status) */
    KILN_FETCH_UNAVAILABLE = 1,    /* libcurl could not be loaded */
    KILN_FETCH_REFUSED = 2,        /* `check` refused an address */
    KILN_FETCH_TOO_LARGE = 3,      /* the body is over max_bytes */
    KILN_FETCH_TIMEOUT = 4,
    KILN_FETCH_REDIRECTS = 5,      /* more than max_redirects, or to another protocol */
    KILN_FETCH_TRANSPORT = 6,      /* DNS, connect, TLS, a connection cut short ... (message says) */
};

typedef struct {
    int outcome;
    long status;
    char message[256];
    unsigned char *body;
    size_t length;
    size_t capacity;
    long long max_bytes;
    /* Of the last response (after redirects); empty when absent. */
    char etag[256];
    char last_modified[64];
    long long content_length; /* -1 when absent */
    char content_range[128];  /* of a 206: "bytes first-last/total" */
    long redirects;
    /* The transfer itself proves where the body ends: a Content-Length, chunked encoding, or
     * HTTP/2 and later framing. 0: the body ended when the connection closed (HTTP/1.x without
     * either), which a cut connection looks like too. */
    int delimited;
    char content_type[128];
    /* The final response's `x-amz-meta-<name>: value` headers as `name: value` lines (name
     * lower-cased, each line ended by \n); headers that do not fit are left out (`meta_truncated`). */
    char meta[2048];
    int meta_truncated;
} kiln_fetch_result;

/* Fills `result` (release it with kiln_fetch_release) and returns its outcome. */
int kiln_fetch(const kiln_fetch_request *request, kiln_fetch_result *result);
void kiln_fetch_release(kiln_fetch_result *result);

#endif
