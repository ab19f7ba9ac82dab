#define _GNU_SOURCE
#include "kiln_fetch.h"
#include <curl/curl.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

/* libcurl's entry points, resolved once. */
static struct {
    int loaded;
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void load_curl(void) {
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
#define SYM(field, name) *(void **)(&curl.field) = dlsym(lib, name); if (!curl.field) return;
    SYM(global_init, "curl_global_init")
    SYM(easy_init, "curl_easy_init")
    SYM(easy_setopt, "curl_easy_setopt")
    SYM(easy_perform, "curl_easy_perform")
    SYM(easy_getinfo, "curl_easy_getinfo")
    SYM(easy_cleanup, "curl_easy_cleanup")
    SYM(easy_strerror, "curl_easy_strerror")
    SYM(slist_append, "curl_slist_append")
    SYM(slist_free_all, "curl_slist_free_all")
#undef SYM
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return;
    curl.loaded = 1;
}

typedef struct {
    const kiln_fetch_request *request;
    kiln_fetch_result *result;
    int refused;
    int too_large;
    int chunked;
    /* The minimum speed (request->low_speed_*): measured from the end of the final response's
     * headers (time to first byte is the time-out's business), window by window. */
    double window_start; /* 0: headers not complete yet */
    size_t window_bytes; /* body bytes when the window began */
    int too_slow;
} transfer;

static double monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* libcurl calls it often while bytes arrive and about once a second while none do: non-zero
 * aborts the transfer. A window of low_speed_time seconds that brought less than
 * low_speed_limit bytes a second ends it; a faster one starts the next window. */
static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    transfer *t = user;
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    if (t->window_start == 0) return 0;
    double now = monotonic_seconds();
    double span = now - t->window_start;
    if (span < (double)t->request->low_speed_time) return 0;
    size_t got = t->result->length - t->window_bytes;
    if ((double)got < (double)t->request->low_speed_limit * span) {
        t->too_slow = 1;
        return 1;
    }
    t->window_start = now;
    t->window_bytes = t->result->length;
    return 0;
}

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    transfer *t = user;
    kiln_fetch_result *r = t->result;
    size_t n = size * count;
    if ((long long)(r->length + n) > r->max_bytes) {
        t->too_large = 1;
        return 0; /* CURLE_WRITE_ERROR */
    }
    if (r->length + n > r->capacity) {
        size_t want = r->capacity ? r->capacity * 2 : 64 * 1024;
        while (want < r->length + n) want *= 2;
        if ((long long)want > r->max_bytes) want = (size_t)r->max_bytes;
        unsigned char *grown = realloc(r->body, want);
        if (!grown) return 0;
        r->body = grown;
        r->capacity = want;
    }
    memcpy(r->body + r->length, data, n);
    r->length += n;
    return n;
}

/* Copies a header's value (trimmed) into `out` when `line` is `name: value`. */
static int header_value(const char *line, size_t len, const char *name, char *out, size_t out_size) {
    size_t name_len = strlen(name);
    if (len <= name_len || strncasecmp(line, name, name_len) != 0 || line[name_len] != ':') return 0;
    const char *v = line + name_len + 1;
    const char *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t')) end--;
    size_t n = (size_t)(end - v);
    if (n >= out_size) n = out_size - 1;
    memcpy(out, v, n);
    out[n] = 0;
    return 1;
}

/* Appends `x-amz-meta-<name>: value` (name lower-cased, value trimmed) to r->meta as a line. */
static void append_meta(kiln_fetch_result *r, const char *line, size_t len) {
    static const char prefix[] = "x-amz-meta-";
    size_t p = sizeof prefix - 1;
    if (len <= p || strncasecmp(line, prefix, p) != 0) return;
    const char *colon = memchr(line, ':', len);
    if (!colon || colon == line + p) return;
    const char *v = colon + 1;
    const char *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t')) end--;
    size_t name_len = (size_t)(colon - line) - p;
    size_t value_len = (size_t)(end - v);
    size_t used = strlen(r->meta);
    if (used + name_len + 2 + value_len + 2 > sizeof r->meta) {
        r->meta_truncated = 1;
        return;
    }
    char *out = r->meta + used;
    for (size_t i = 0; i < name_len; i++) {
        char c = line[p + i];
        *out++ = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    *out++ = ':';
    *out++ = ' ';
    memcpy(out, v, value_len);
    out += value_len;
    *out++ = '\n';
    *out = 0;
}

static size_t on_header(char *data, size_t size, size_t count, void *user) {
    transfer *t = user;
    kiln_fetch_result *r = t->result;
    size_t n = size * count;
    if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        /* A new response (after a redirect or a 100): forget the previous one's headers. */
        r->etag[0] = 0;
        r->last_modified[0] = 0;
        r->content_range[0] = 0;
        r->content_length = -1;
        r->content_type[0] = 0;
        r->meta[0] = 0;
        r->meta_truncated = 0;
        t->chunked = 0;
        t->window_start = 0;
        return n;
    }
    if (n <= 2 && (data[0] == '\r' || data[0] == '\n')) {
        /* The end of a response's headers: its body (if it is the final one) starts now. */
        t->window_start = monotonic_seconds();
        t->window_bytes = r->length;
        return n;
    }
    char length[32];
    char coding[64];
    if (header_value(data, n, "Transfer-Encoding", coding, sizeof coding) && strcasestr(coding, "chunked")) t->chunked = 1;
    header_value(data, n, "ETag", r->etag, sizeof r->etag);
    header_value(data, n, "Last-Modified", r->last_modified, sizeof r->last_modified);
    header_value(data, n, "Content-Range", r->content_range, sizeof r->content_range);
    header_value(data, n, "Content-Type", r->content_type, sizeof r->content_type);
    append_meta(r, data, n);
    if (header_value(data, n, "Content-Length", length, sizeof length)) {
        char *end = NULL;
        long long v = strtoll(length, &end, 10);
        r->content_length = (end && *end == 0 && v >= 0) ? v : -1;
    }
    return n;
}

static curl_socket_t on_open_socket(void *user, curlsocktype purpose, struct curl_sockaddr *address) {
    transfer *t = user;
    (void)purpose;
    const unsigned char *bytes = NULL;
    int length = 0;
    if (address->family == AF_INET) {
        bytes = (const unsigned char *)&((struct sockaddr_in *)&address->addr)->sin_addr;
        length = 4;
    } else if (address->family == AF_INET6) {
        bytes = (const unsigned char *)&((struct sockaddr_in6 *)&address->addr)->sin6_addr;
        length = 16;
    }
    if (!bytes || (t->request->check && t->request->check(t->request->check_context, bytes, length) != 0)) {
        t->refused = 1;
        return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

int kiln_fetch(const kiln_fetch_request *request, kiln_fetch_result *result) {
    memset(result, 0, sizeof *result);
    result->content_length = -1;
    result->max_bytes = request->max_bytes > 0 ? request->max_bytes : 0;
    pthread_once(&curl_once, load_curl);
    if (!curl.loaded) {
        result->outcome = KILN_FETCH_UNAVAILABLE;
        snprintf(result->message, sizeof result->message, "libcurl (libcurl.so.4) is not installed");
        return result->outcome;
    }
    CURL *h = curl.easy_init();
    if (!h) {
        result->outcome = KILN_FETCH_TRANSPORT;
        snprintf(result->message, sizeof result->message, "curl_easy_init failed");
        return result->outcome;
    }
    transfer t = {.request = request, .result = result};
    char error[CURL_ERROR_SIZE] = {0};
    struct curl_slist *headers = NULL;
    for (int i = 0; i < request->header_count; i++) {
        struct curl_slist *appended = curl.slist_append(headers, request->headers[i]);
        if (!appended) break;
        headers = appended;
    }
    curl.easy_setopt(h, CURLOPT_URL, request->url);
    curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl.easy_setopt(h, CURLOPT_MAXREDIRS, request->max_redirects);
    curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms);
    curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, request->timeout_ms);
    curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* A name lookup still running when the transfer times out (the threaded resolver, glibc
     * waiting on DNS servers that do not answer: 2 x 5 s by default) is left to finish on its
     * own thread instead of being waited for, so fetch_timeout holds (libcurl 7.87+, Debian 12
     * has 7.88; older ones refuse the option and keep waiting). */
    curl.easy_setopt(h, CURLOPT_QUICK_EXIT, 1L);
    curl.easy_setopt(h, CURLOPT_PROXY, "");
    curl.easy_setopt(h, CURLOPT_USERAGENT, "kiln");
    curl.easy_setopt(h, CURLOPT_ERRORBUFFER, error);
    curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl.easy_setopt(h, CURLOPT_WRITEDATA, &t);
    curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl.easy_setopt(h, CURLOPT_HEADERDATA, &t);
    curl.easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    curl.easy_setopt(h, CURLOPT_OPENSOCKETDATA, &t);
    if (result->max_bytes > 0) curl.easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)result->max_bytes);
    if (headers) curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    if (request->method && strcmp(request->method, "HEAD") == 0) {
        curl.easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (request->method && strcmp(request->method, "GET") != 0) {
        curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, request->method);
    }
    if (request->body && request->body_length > 0) {
        /* Sent from the caller's buffer as it is (no copy, no form encoding). */
        curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_length);
        curl.easy_setopt(h, CURLOPT_POSTFIELDS, (const char *)request->body);
    }
    if (request->low_speed_limit > 0 && request->low_speed_time > 0) {
        curl.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl.easy_setopt(h, CURLOPT_XFERINFODATA, &t);
        curl.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }

    CURLcode rc = curl.easy_perform(h);
    curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &result->status);
    curl.easy_getinfo(h, CURLINFO_REDIRECT_COUNT, &result->redirects);
    long version = 0;
    curl.easy_getinfo(h, CURLINFO_HTTP_VERSION, &version);
    result->delimited = result->content_length >= 0 || t.chunked || version >= CURL_HTTP_VERSION_2_0;
    const char *why = error[0] ? error : curl.easy_strerror(rc);
    if (rc == CURLE_OK) {
        result->outcome = KILN_FETCH_OK;
    } else if (t.refused) {
        result->outcome = KILN_FETCH_REFUSED;
        snprintf(result->message, sizeof result->message, "connection refused by source.allowed_networks");
    } else if (t.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
        result->outcome = KILN_FETCH_TOO_LARGE;
        snprintf(result->message, sizeof result->message, "more than %lld bytes", result->max_bytes);
    } else if (t.too_slow) {
        result->outcome = KILN_FETCH_TIMEOUT;
        snprintf(result->message, sizeof result->message, "less than %ld bytes a second for %ld s (source.min_speed)",
                 request->low_speed_limit, request->low_speed_time);
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        result->outcome = KILN_FETCH_TIMEOUT;
        snprintf(result->message, sizeof result->message, "%s", why);
    } else if (rc == CURLE_TOO_MANY_REDIRECTS || rc == CURLE_UNSUPPORTED_PROTOCOL) {
        result->outcome = KILN_FETCH_REDIRECTS;
        snprintf(result->message, sizeof result->message, "%s", why);
    } else {
        result->outcome = KILN_FETCH_TRANSPORT;
        snprintf(result->message, sizeof result->message, "%s", why);
    }
    if (headers) curl.slist_free_all(headers);
    curl.easy_cleanup(h);
    return result->outcome;
}

void kiln_fetch_release(kiln_fetch_result *result) {
    free(result->body);
    result->body = NULL;
    result->length = result->capacity = 0;
}
