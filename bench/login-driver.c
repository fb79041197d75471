/*
 * login-driver: the load generator of bench/login-flow.
 *
 * One thread, epoll, CONCURRENCY sessions, each with its own keep-alive
 * connection to the server under test. It speaks just enough HTTP/1.1 for
 * the three servers it meets (Gatehouse, bench/login-mock.c and its token
 * endpoint): requests written whole in one send, responses framed by
 * Content-Length or by the server closing the connection. A chunked response
 * is reported as a failure. It is written against sockets rather than
 * libcurl because the driver shares two cores with the server it measures:
 * libcurl cost about 30 us of CPU per request here, this about a third of
 * that, and every microsecond the driver spends is taken from the gateway.
 *
 * Modes:
 *   login  each session loops over OAuth.io's server-side login against
 *          Gatehouse: GET /auth/PROVIDER (302 to the provider, carrying a
 *          state), GET /auth?state=..&code=.. (Gatehouse calls the provider's
 *          token endpoint and answers a page carrying a one-time code), POST
 *          /auth/access_token (the code, key and secret for the credentials).
 *          A login's latency runs from the start of the first request to the
 *          end of the third.
 *   echo   the same loop, checks included, against bench/login-mock.c's
 *          canned imitation of those three responses: what the driver itself
 *          can do on this machine.
 *   mock   POST /oauth2/token to the mock over keep-alive connections, as
 *          Gatehouse's HTTP client sends a token request with a body: what
 *          the mock provider can do on its own.
 *
 * Prints one JSON line on stdout:
 *   {"mode":..,"ok":N,"failed":N,"seconds":..,"per_second":..,"p50_ms":..,
 *    "p99_ms":..,"cpu_seconds":..}
 * per_second counts logins (login, echo) or token requests (mock) completed
 * inside the measured window; requests still in flight when it closes are
 * abandoned and counted neither way. The first failure is described on
 * stderr. Exit status 0 when the run completed (failures or not), 1 on a
 * setup error, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONCURRENCY 4096
/* Gatehouse's login page is about 1.5 KB; a response whose body is larger
 * than this fails, as a malformed page would. */
#define BODY_CAPACITY 16384
#define HEAD_CAPACITY 4096
#define REQUEST_CAPACITY 2048
#define LOCATION_CAPACITY 2048
#define ID_LENGTH 27
/* Latency histogram: 10 microsecond buckets up to 10 s, the last bucket
 * collecting everything slower. Fixed size, so recording never allocates. */
#define BUCKET_US 10
#define BUCKETS 1000000
#define TRANSFER_TIMEOUT_SECONDS 15.0

enum mode { MODE_LOGIN, MODE_ECHO, MODE_MOCK };
enum step { STEP_START, STEP_CALLBACK, STEP_REDEEM, STEP_TOKEN };

struct session {
    int fd;            /* -1 while there is no connection */
    int connecting;    /* a non-blocking connect is in progress */
    uint32_t watched;  /* the events epoll watches for on fd */
    enum step step;
    unsigned long serial;
    double started;    /* the login's (or token request's) first byte */
    double deadline;   /* when the current request times out */
    size_t out_length, out_sent;
    char out[REQUEST_CAPACITY];
    /* The response as it arrives: head and body, contiguous. */
    size_t in_length;
    char in[HEAD_CAPACITY + BODY_CAPACITY + 1];
    /* Set once the head is complete. */
    size_t head_length;
    long content_length;   /* -1: until the server closes */
    int status;
    int close_after;       /* the server said Connection: close */
    char location[LOCATION_CAPACITY];
    const char *body;      /* into `in`, NUL-terminated, once complete */
    size_t body_length;
};

static struct {
    enum mode mode;
    const char *base;
    const char *key;
    const char *secret;
    const char *provider;
    int concurrency;
    double duration;
} config = {MODE_LOGIN, NULL, NULL, NULL, "benchmock", 64, 10};

static int epoll_fd;
static struct sockaddr_in server_address;
static char host_header[300];
static struct session *sessions;

static int measuring;
static double window_end;
static unsigned long ok_count;
static unsigned long failed_count;
static unsigned long serial_counter;
static uint32_t histogram[BUCKETS];
static int first_failure_reported;
/* Sessions whose request failed, to start again from the event loop. A
 * session is queued at most once: it has no request in flight meanwhile. */
static struct session **restarts;
static struct session **restarting;
static int restart_count;

static double
now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
cpu_seconds(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
           (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
}

static void
fatal(const char *format, ...)
{
    va_list args;
    fputs("login-driver: ", stderr);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    exit(1);
}

static void
record_latency(double seconds)
{
    long bucket = (long)(seconds * 1e6 / BUCKET_US);
    if (bucket < 0)
        bucket = 0;
    if (bucket >= BUCKETS)
        bucket = BUCKETS - 1;
    histogram[bucket]++;
}

/* Upper edge of the bucket holding the q-quantile, in milliseconds. */
static double
quantile_ms(double q)
{
    unsigned long rank, seen = 0;
    long i;

    if (ok_count == 0)
        return 0;
    rank = (unsigned long)(q * (double)ok_count);
    if ((double)rank < q * (double)ok_count)
        rank++;
    if (rank == 0)
        rank = 1;
    for (i = 0; i < BUCKETS; i++) {
        seen += histogram[i];
        if (seen >= rank)
            return (double)(i + 1) * BUCKET_US / 1000.0;
    }
    return (double)BUCKETS * BUCKET_US / 1000.0;
}

static const char *
step_name(enum step step)
{
    switch (step) {
    case STEP_START:
        return "1 (GET /auth/PROVIDER)";
    case STEP_CALLBACK:
        return "2 (GET /auth?state=..&code=..)";
    case STEP_REDEEM:
        return "3 (POST /auth/access_token)";
    default:
        return "POST /oauth2/token";
    }
}

/* STATUS is 0 when no complete response arrived. */
static void
report_failure(struct session *s, int status, const char *why)
{
    failed_count++;
    if (first_failure_reported)
        return;
    first_failure_reported = 1;
    fprintf(stderr, "login-driver: first failure, step %s: %s\n", step_name(s->step), why);
    fprintf(stderr, "login-driver:   request: %.*s\n", (int)strcspn(s->out, "\r"), s->out);
    if (status != 0)
        fprintf(stderr, "login-driver:   HTTP status %d, body: %.600s\n", status,
                s->body != NULL ? s->body : "(incomplete)");
}

/* ---------------------------------------------------------------------------
 * Response checks. */

static int
is_id_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
}

/* Copies the 27-character identifier at P into OUT when P holds exactly one
 * (followed by END_OK, or by the end of the string when END_OK is NUL). */
static int
take_identifier(const char *p, const char *limit, char end_ok, char out[ID_LENGTH + 1])
{
    int i;
    if (limit - p < ID_LENGTH)
        return 0;
    for (i = 0; i < ID_LENGTH; i++) {
        if (!is_id_char(p[i]))
            return 0;
    }
    if (p + ID_LENGTH < limit && p[ID_LENGTH] != end_ok)
        return 0;
    memcpy(out, p, ID_LENGTH);
    out[ID_LENGTH] = '\0';
    return 1;
}

/* The state parameter of the provider URL in the Location header. */
static int
state_from_location(const char *location, char out[ID_LENGTH + 1])
{
    const char *query = strchr(location, '?');
    const char *p = query;
    const char *limit = location + strlen(location);

    while (p != NULL && p < limit) {
        p++;
        if (strncmp(p, "state=", 6) == 0) {
            const char *value = p + 6;
            const char *end = strchrnul(value, '&');
            return take_identifier(value, end, '&', out);
        }
        p = strchr(p, '&');
    }
    return 0;
}

/* The one-time code inside the page's `var msg = "...";` JSON string, where
 * every quote is escaped as \". */
static int
code_from_page(const char *body, size_t length, char out[ID_LENGTH + 1])
{
    static const char marker[] = "\\\"code\\\":\\\"";
    const char *p = memmem(body, length, marker, sizeof(marker) - 1);
    if (p == NULL)
        return 0;
    p += sizeof(marker) - 1;
    return take_identifier(p, body + length, '\\', out);
}

/* ---------------------------------------------------------------------------
 * Connections and requests. */

static void
disconnect(struct session *s)
{
    if (s->fd >= 0)
        close(s->fd);   /* also removes it from the epoll set */
    s->fd = -1;
    s->connecting = 0;
}

/* Sets the events epoll reports for the session's socket. Between two
 * requests on a kept-alive connection they stay the same, and the call that
 * would repeat them is skipped: a system call per request would be driver
 * cost the gateway's measurement pays for on this shared machine. */
static void
watch(struct session *s, int op, uint32_t events)
{
    struct epoll_event event;
    if (op == EPOLL_CTL_MOD && s->watched == events)
        return;
    s->watched = events;
    memset(&event, 0, sizeof(event));
    event.events = events;
    event.data.ptr = s;
    if (epoll_ctl(epoll_fd, op, s->fd, &event) != 0)
        fatal("epoll_ctl: %s", strerror(errno));
}

static void begin(struct session *s);
static void finished(struct session *s);

/* Ends the current request as failed. The session starts its next login, on
 * a new connection, from the event loop: starting it here could recurse
 * without end while the server refuses every connection. */
static void
fail(struct session *s, int status, const char *why)
{
    report_failure(s, status, why);
    disconnect(s);
    s->deadline = 0;
    if (measuring)
        restarts[restart_count++] = s;
}

/* Writes what is left of the request; waits for room when the socket is
 * full. */
static void
flush_request(struct session *s)
{
    while (s->out_sent < s->out_length) {
        ssize_t n = send(s->fd, s->out + s->out_sent, s->out_length - s->out_sent, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                watch(s, EPOLL_CTL_MOD, EPOLLIN | EPOLLOUT);
                return;
            }
            fail(s, 0, strerror(errno));
            return;
        }
        s->out_sent += (size_t)n;
    }
    watch(s, EPOLL_CTL_MOD, EPOLLIN);
}

/* Sends the request composed in s->out, opening a connection if there is
 * none (a fresh session, or the server closed the last one). */
static void
send_request(struct session *s)
{
    s->out_sent = 0;
    s->in_length = 0;
    s->head_length = 0;
    s->body = NULL;
    s->deadline = now_seconds() + TRANSFER_TIMEOUT_SECONDS;
    if (s->fd < 0) {
        int one = 1;
        s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s->fd < 0)
            fatal("socket: %s", strerror(errno));
        setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        watch(s, EPOLL_CTL_ADD, EPOLLOUT);
        if (connect(s->fd, (struct sockaddr *)&server_address, sizeof(server_address)) != 0) {
            if (errno != EINPROGRESS) {
                fail(s, 0, strerror(errno));
                return;
            }
            s->connecting = 1;
            return;
        }
    }
    flush_request(s);
}

static void
compose(struct session *s, const char *method, const char *target, const char *accept,
        const char *form)
{
    int length;
    if (form == NULL) {
        length = snprintf(s->out, sizeof(s->out),
                          "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: gatehouse-bench-login-driver\r\n"
                          "Accept: %s\r\n\r\n",
                          method, target, host_header, accept);
    } else {
        length = snprintf(s->out, sizeof(s->out),
                          "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: gatehouse-bench-login-driver\r\n"
                          "Accept: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                          "Content-Length: %zu\r\n\r\n%s",
                          method, target, host_header, accept, strlen(form), form);
    }
    if (length < 0 || (size_t)length >= sizeof(s->out))
        fatal("request does not fit %d bytes", REQUEST_CAPACITY);
    s->out_length = (size_t)length;
}

static void
begin(struct session *s)
{
    char target[512], form[512];
    s->serial = ++serial_counter;
    s->started = now_seconds();
    if (config.mode == MODE_MOCK) {
        snprintf(form, sizeof(form),
                 "grant_type=authorization_code&code=c%lu"
                 "&redirect_uri=http%%3A%%2F%%2F127.0.0.1%%2Fauth"
                 "&client_id=bench-client&client_secret=bench-secret",
                 s->serial);
        s->step = STEP_TOKEN;
        compose(s, "POST", "/oauth2/token", "application/json", form);
    } else {
        s->step = STEP_START;
        snprintf(target, sizeof(target),
                 "/auth/%s?k=%s&d=http%%3A%%2F%%2Flocalhost%%2F&opts=%%7B%%22state%%22%%3A%%22s1%%22%%7D",
                 config.provider, config.key);
        compose(s, "GET", target, "*/*", NULL);
    }
    send_request(s);
}

/* Handles a complete response and starts the session's next request. */
static void
finished(struct session *s)
{
    char id[ID_LENGTH + 1], target[512], form[512];
    int status = s->status;
    double done;

    if (s->close_after)
        disconnect(s);

    switch (s->step) {
    case STEP_START:
        if (status != 302) {
            report_failure(s, status, "expected 302");
            goto next_login;
        }
        if (s->location[0] == '\0' || !state_from_location(s->location, id)) {
            report_failure(s, status, "no 27-character state in the Location header");
            fprintf(stderr, "login-driver:   Location: %.600s\n", s->location);
            goto next_login;
        }
        s->step = STEP_CALLBACK;
        snprintf(target, sizeof(target), "/auth?state=%s&code=bench-code-%lu", id, s->serial);
        compose(s, "GET", target, "*/*", NULL);
        send_request(s);
        return;
    case STEP_CALLBACK:
        if (status != 200) {
            report_failure(s, status, "expected 200");
            goto next_login;
        }
        if (!code_from_page(s->body, s->body_length, id)) {
            report_failure(s, status,
                           strstr(s->body, "\\\"status\\\":\\\"error\\\"") != NULL
                               ? "the page reports an error"
                               : "no 27-character code in the page");
            goto next_login;
        }
        s->step = STEP_REDEEM;
        snprintf(form, sizeof(form), "code=%s&key=%s&secret=%s", id, config.key, config.secret);
        compose(s, "POST", "/auth/access_token", "*/*", form);
        send_request(s);
        return;
    case STEP_REDEEM:
    case STEP_TOKEN:
        if (status != 200) {
            report_failure(s, status, "expected 200");
            goto next_login;
        }
        if (memmem(s->body, s->body_length, "\"access_token\"", 14) == NULL) {
            report_failure(s, status, "no \"access_token\" in the response");
            goto next_login;
        }
        done = now_seconds();
        if (done <= window_end) {
            ok_count++;
            record_latency(done - s->started);
        }
        break;
    }

next_login:
    if (measuring)
        begin(s);
}

/* ---------------------------------------------------------------------------
 * Responses. */

static int
header_is(const char *line, size_t length, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (length <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
        return 0;
    *value = line + n + 1;
    while (**value == ' ' || **value == '\t')
        (*value)++;
    return 1;
}

/* Parses the status line and the headers the driver needs. Returns 0 on
 * success, or a description of what is wrong. */
static const char *
parse_head(struct session *s)
{
    const char *p = s->in, *end = s->in + s->head_length - 2;
    const char *line_end = memmem(p, (size_t)(end - p), "\r\n", 2);

    if (line_end == NULL || line_end - p < 12 || strncmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ')
        return "malformed status line";
    s->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    s->content_length = -1;
    s->close_after = p[7] == '0';
    s->location[0] = '\0';
    for (p = line_end + 2; p < end; p = line_end + 2) {
        const char *value;
        size_t length;
        line_end = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
        length = (size_t)(line_end - p);
        if (header_is(p, length, "content-length", &value)) {
            s->content_length = strtol(value, NULL, 10);
        } else if (header_is(p, length, "location", &value)) {
            size_t n = (size_t)(line_end - value);
            if (n >= LOCATION_CAPACITY)
                return "Location header too long";
            memcpy(s->location, value, n);
            s->location[n] = '\0';
        } else if (header_is(p, length, "connection", &value)) {
            s->close_after = strncasecmp(value, "close", 5) == 0;
        } else if (header_is(p, length, "transfer-encoding", &value)) {
            return "chunked responses are not supported by the driver";
        }
    }
    if (s->status == 204 || s->status == 304 || (s->status >= 100 && s->status < 200))
        s->content_length = 0;
    if (s->content_length > BODY_CAPACITY)
        return "response body larger than the driver's buffer";
    if (s->content_length < 0)
        s->close_after = 1;
    return NULL;
}

/* Reads what has arrived; calls finished() once the response is whole. */
static void
on_readable(struct session *s)
{
    size_t room = sizeof(s->in) - 1 - s->in_length;
    ssize_t n;
    int eof = 0;

    if (room == 0) {
        fail(s, 0, "response larger than the driver's buffer");
        return;
    }
    n = recv(s->fd, s->in + s->in_length, room, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return;
        fail(s, 0, strerror(errno));
        return;
    }
    if (n == 0)
        eof = 1;
    s->in_length += (size_t)n;

    if (s->head_length == 0) {
        const char *head_end = memmem(s->in, s->in_length, "\r\n\r\n", 4);
        const char *problem;
        if (head_end == NULL) {
            if (eof)
                fail(s, 0, s->in_length == 0 ? "connection closed before a response"
                                             : "connection closed inside the response head");
            else if (s->in_length >= HEAD_CAPACITY)
                fail(s, 0, "response head too large");
            return;
        }
        s->head_length = (size_t)(head_end - s->in) + 4;
        if ((problem = parse_head(s)) != NULL) {
            fail(s, s->status, problem);
            return;
        }
    }
    s->body_length = s->in_length - s->head_length;
    if (s->content_length >= 0 ? s->body_length < (size_t)s->content_length : !eof) {
        if (eof)
            fail(s, 0, "connection closed inside the response body");
        return;
    }
    if (s->content_length >= 0 && s->body_length > (size_t)s->content_length) {
        fail(s, s->status, "bytes after the response (the driver does not pipeline)");
        return;
    }
    s->in[s->in_length] = '\0';
    s->body = s->in + s->head_length;
    if (eof)
        s->close_after = 1;
    finished(s);
}

static void
on_event(struct session *s, uint32_t events)
{
    if (s->connecting) {
        int error = 0;
        socklen_t length = sizeof(error);
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) {
            fail(s, 0, strerror(error));
            return;
        }
        s->connecting = 0;
        flush_request(s);
        return;
    }
    if ((events & EPOLLOUT) && s->out_sent < s->out_length) {
        flush_request(s);
        return;
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        on_readable(s);
}

static void
expire_overdue(double now)
{
    int i;
    for (i = 0; i < config.concurrency; i++) {
        if (sessions[i].deadline > 0 && now > sessions[i].deadline && sessions[i].fd >= 0) {
            sessions[i].deadline = 0;
            fail(&sessions[i], 0, "timed out");
        }
    }
}

/* Starts the sessions queued by fail(). Those that fail again at once (a
 * refused connection) are queued for the next pass, after an epoll_wait,
 * rather than retried in a tight loop. */
static void
restart_failed(void)
{
    int i, count = restart_count;
    memcpy(restarting, restarts, (size_t)count * sizeof(*restarts));
    restart_count = 0;
    for (i = 0; i < count; i++)
        begin(restarting[i]);
}

/* Runs the event loop until the monotonic clock passes UNTIL. */
static void
run_until(double until)
{
    struct epoll_event events[256];
    double next_expiry = now_seconds() + 1;

    while (1) {
        double now = now_seconds();
        int wait_ms, n, i;

        if (now >= until)
            return;
        if (restart_count > 0 && measuring)
            restart_failed();
        if (now >= next_expiry) {
            expire_overdue(now);
            next_expiry = now + 1;
        }
        wait_ms = (int)((until - now) * 1000) + 1;
        if (wait_ms > 1000)
            wait_ms = 1000;
        n = epoll_wait(epoll_fd, events, 256, wait_ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fatal("epoll_wait: %s", strerror(errno));
        }
        for (i = 0; i < n; i++)
            on_event(events[i].data.ptr, events[i].events);
    }
}

/* ---------------------------------------------------------------------------
 * Setup. */

static void
usage(const char *program)
{
    fprintf(stderr,
            "usage: %s --gateway URL [--key KEY --secret SECRET] [--concurrency N]\n"
            "          [--duration SECONDS] [--mode login|echo|mock] [--provider NAME]\n"
            "  --gateway  base URL of the server under test (Gatehouse for login,\n"
            "             login-mock for echo and mock), e.g. http://127.0.0.1:8080\n"
            "  --key/--secret are required in login mode\n",
            program);
    exit(2);
}

static int
parse_positive(const char *text, double max, double *out)
{
    char *end = NULL;
    double value;
    errno = 0;
    value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value > 0) || value > max)
        return -1;
    *out = value;
    return 0;
}

static void
parse_arguments(int argc, char **argv)
{
    int i;
    double number;

    for (i = 1; i < argc; i++) {
        const char *name = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (value == NULL)
            usage(argv[0]);
        i++;
        if (strcmp(name, "--gateway") == 0) {
            config.base = value;
        } else if (strcmp(name, "--key") == 0) {
            config.key = value;
        } else if (strcmp(name, "--secret") == 0) {
            config.secret = value;
        } else if (strcmp(name, "--provider") == 0) {
            config.provider = value;
        } else if (strcmp(name, "--concurrency") == 0) {
            if (parse_positive(value, MAX_CONCURRENCY, &number) != 0 || number != (int)number)
                usage(argv[0]);
            config.concurrency = (int)number;
        } else if (strcmp(name, "--duration") == 0) {
            if (parse_positive(value, 86400, &number) != 0)
                usage(argv[0]);
            config.duration = number;
        } else if (strcmp(name, "--mode") == 0) {
            if (strcmp(value, "login") == 0)
                config.mode = MODE_LOGIN;
            else if (strcmp(value, "echo") == 0)
                config.mode = MODE_ECHO;
            else if (strcmp(value, "mock") == 0)
                config.mode = MODE_MOCK;
            else
                usage(argv[0]);
        } else {
            usage(argv[0]);
        }
    }
    if (config.base == NULL || strlen(config.base) > 256)
        usage(argv[0]);
    if (config.mode == MODE_LOGIN && (config.key == NULL || config.secret == NULL))
        usage(argv[0]);
    if (config.key == NULL)
        config.key = "echo-key";
    if (config.secret == NULL)
        config.secret = "echo-secret";
    /* Gatehouse's keys and secrets are base64url identifiers; anything longer
     * would not fit the form buffer and needs no support here. */
    if (strlen(config.key) > 128 || strlen(config.secret) > 128 || strlen(config.provider) > 64)
        usage(argv[0]);
}

/* Only what bench/login-flow passes: http://IPV4-OR-NAME:PORT, no path. */
static void
resolve_base(const char *program)
{
    const char *authority;
    char host[256];
    const char *colon;
    struct addrinfo hints, *found = NULL;
    long port;

    if (strncmp(config.base, "http://", 7) != 0)
        usage(program);
    authority = config.base + 7;
    colon = strrchr(authority, ':');
    if (colon == NULL || colon == authority || (size_t)(colon - authority) >= sizeof(host))
        usage(program);
    port = strtol(colon + 1, NULL, 10);
    if (port <= 0 || port > 65535 || strspn(colon + 1, "0123456789") != strlen(colon + 1))
        usage(program);
    memcpy(host, authority, (size_t)(colon - authority));
    host[colon - authority] = '\0';
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &found) != 0 || found == NULL)
        fatal("cannot resolve %s", host);
    memcpy(&server_address, found->ai_addr, sizeof(server_address));
    server_address.sin_port = htons((uint16_t)port);
    freeaddrinfo(found);
    snprintf(host_header, sizeof(host_header), "%s", authority);
}

int
main(int argc, char **argv)
{
    double window_start, cpu_start, cpu_used;
    int i;

    parse_arguments(argc, argv);
    resolve_base(argv[0]);

    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd < 0)
        fatal("epoll_create1: %s", strerror(errno));
    sessions = calloc((size_t)config.concurrency, sizeof(*sessions));
    restarts = calloc((size_t)config.concurrency, sizeof(*restarts));
    restarting = calloc((size_t)config.concurrency, sizeof(*restarting));
    if (sessions == NULL || restarts == NULL || restarting == NULL)
        fatal("out of memory");
    for (i = 0; i < config.concurrency; i++)
        sessions[i].fd = -1;

    window_start = now_seconds();
    window_end = window_start + config.duration;
    cpu_start = cpu_seconds();
    measuring = 1;
    for (i = 0; i < config.concurrency; i++)
        begin(&sessions[i]);
    run_until(window_end);
    measuring = 0;
    cpu_used = cpu_seconds() - cpu_start;

    printf("{\"mode\":\"%s\",\"ok\":%lu,\"failed\":%lu,\"seconds\":%.3f,\"per_second\":%.1f,"
           "\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"cpu_seconds\":%.3f,\"concurrency\":%d}\n",
           config.mode == MODE_LOGIN ? "login" : config.mode == MODE_ECHO ? "echo" : "mock",
           ok_count, failed_count, config.duration, (double)ok_count / config.duration,
           quantile_ms(0.50), quantile_ms(0.99), cpu_used, config.concurrency);
    fflush(stdout);

    /* Abandon whatever is in flight; the process exit closes the sockets. */
    _exit(0);
}
