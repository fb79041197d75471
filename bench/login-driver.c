/*
 * login-driver: the load generator of bench/login-flow.
 *
 * One thread, one libcurl multi handle driven through curl_multi_socket_action
 * and epoll, CONCURRENCY sessions. Each session owns one easy handle that it
 * reuses for every request, so its keep-alive connection to the server under
 * test survives from one request to the next.
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
 *   mock   POST /oauth2/token to the mock with a fresh connection per request
 *          (CURLOPT_FRESH_CONNECT, as Gatehouse's HTTP client does): what the
 *          mock provider can do on its own.
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
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONCURRENCY 4096
/* Gatehouse's login page is about 1.5 KB; anything past this is cut off, and
 * a cut-off page fails the check for the code like any malformed page. */
#define BODY_CAPACITY 16384
#define URL_CAPACITY 2048
#define ID_LENGTH 27
/* Latency histogram: 10 microsecond buckets up to 10 s, the last bucket
 * collecting everything slower. Fixed size, so recording never allocates. */
#define BUCKET_US 10
#define BUCKETS 1000000
#define TRANSFER_TIMEOUT_MS 15000L

enum mode { MODE_LOGIN, MODE_ECHO, MODE_MOCK };
enum step { STEP_START, STEP_CALLBACK, STEP_REDEEM, STEP_TOKEN };

struct session {
    CURL *easy;
    enum step step;
    unsigned long serial;
    double started;
    size_t body_length;
    char body[BODY_CAPACITY + 1];
    char url[URL_CAPACITY];
    char form[512];
    char error[CURL_ERROR_SIZE];
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

static CURLM *multi;
static int epoll_fd;
/* When libcurl wants curl_multi_socket_action(CURL_SOCKET_TIMEOUT), on the
 * monotonic clock; negative when it wants nothing. */
static double timer_deadline = -1;
static struct session *sessions;
static char start_url[URL_CAPACITY];
static struct curl_slist *token_headers;

static int measuring;
static double window_end;
static unsigned long ok_count;
static unsigned long failed_count;
static unsigned long serial_counter;
static uint32_t histogram[BUCKETS];
static int first_failure_reported;

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

static void
report_failure(struct session *s, CURLcode result, long status, const char *why)
{
    failed_count++;
    if (first_failure_reported)
        return;
    first_failure_reported = 1;
    fprintf(stderr, "login-driver: first failure, step %s: %s\n", step_name(s->step), why);
    fprintf(stderr, "login-driver:   url: %s\n", s->url);
    if (result != CURLE_OK)
        fprintf(stderr, "login-driver:   curl: %s (%s)\n", curl_easy_strerror(result),
                s->error[0] != '\0' ? s->error : "no details");
    else
        fprintf(stderr, "login-driver:   HTTP status %ld, body: %.600s\n", status, s->body);
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
 * Requests. */

static size_t
on_body(char *data, size_t size, size_t count, void *user)
{
    struct session *s = user;
    size_t bytes = size * count;
    size_t room = BODY_CAPACITY - s->body_length;
    size_t take = bytes < room ? bytes : room;

    memcpy(s->body + s->body_length, data, take);
    s->body_length += take;
    s->body[s->body_length] = '\0';
    return bytes;
}

static void
submit(struct session *s)
{
    CURLMcode code;
    s->body_length = 0;
    s->body[0] = '\0';
    s->error[0] = '\0';
    curl_easy_setopt(s->easy, CURLOPT_URL, s->url);
    code = curl_multi_add_handle(multi, s->easy);
    if (code != CURLM_OK)
        fatal("curl_multi_add_handle: %s", curl_multi_strerror(code));
}

static void
request_get(struct session *s)
{
    curl_easy_setopt(s->easy, CURLOPT_HTTPGET, 1L);
    submit(s);
}

static void
request_post(struct session *s, const char *form, size_t length)
{
    /* POSTFIELDS is not copied: FORM must live in the session. */
    curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE, (long)length);
    curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, form);
    submit(s);
}

static void
begin(struct session *s)
{
    s->serial = ++serial_counter;
    s->started = now_seconds();
    if (config.mode == MODE_MOCK) {
        int length = snprintf(s->form, sizeof(s->form),
                              "grant_type=authorization_code&code=c%lu"
                              "&redirect_uri=http%%3A%%2F%%2F127.0.0.1%%2Fauth"
                              "&client_id=bench-client&client_secret=bench-secret",
                              s->serial);
        s->step = STEP_TOKEN;
        snprintf(s->url, sizeof(s->url), "%s/oauth2/token", config.base);
        request_post(s, s->form, (size_t)length);
        return;
    }
    s->step = STEP_START;
    memcpy(s->url, start_url, strlen(start_url) + 1);
    request_get(s);
}

/* Handles a finished transfer and starts the session's next request. */
static void
finished(struct session *s, CURLcode result)
{
    long status = 0;
    double done;
    char id[ID_LENGTH + 1];

    curl_multi_remove_handle(multi, s->easy);
    if (result == CURLE_OK)
        curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);

    if (result != CURLE_OK) {
        report_failure(s, result, 0, "transfer failed");
        goto next_login;
    }

    switch (s->step) {
    case STEP_START: {
        char *location = NULL;
        if (status != 302) {
            report_failure(s, result, status, "expected 302");
            goto next_login;
        }
        curl_easy_getinfo(s->easy, CURLINFO_REDIRECT_URL, &location);
        if (location == NULL || !state_from_location(location, id)) {
            report_failure(s, result, status, "no 27-character state in the Location header");
            if (location != NULL)
                fprintf(stderr, "login-driver:   Location: %.600s\n", location);
            goto next_login;
        }
        s->step = STEP_CALLBACK;
        snprintf(s->url, sizeof(s->url), "%s/auth?state=%s&code=bench-code-%lu", config.base, id,
                 s->serial);
        request_get(s);
        return;
    }
    case STEP_CALLBACK: {
        int length;
        if (status != 200) {
            report_failure(s, result, status, "expected 200");
            goto next_login;
        }
        if (!code_from_page(s->body, s->body_length, id)) {
            report_failure(s, result, status,
                           strstr(s->body, "\\\"status\\\":\\\"error\\\"") != NULL
                               ? "the page reports an error"
                               : "no 27-character code in the page");
            goto next_login;
        }
        s->step = STEP_REDEEM;
        snprintf(s->url, sizeof(s->url), "%s/auth/access_token", config.base);
        length = snprintf(s->form, sizeof(s->form), "code=%s&key=%s&secret=%s", id, config.key,
                          config.secret);
        request_post(s, s->form, (size_t)length);
        return;
    }
    case STEP_REDEEM:
    case STEP_TOKEN:
        if (status != 200) {
            report_failure(s, result, status, "expected 200");
            goto next_login;
        }
        if (memmem(s->body, s->body_length, "\"access_token\"", 14) == NULL) {
            report_failure(s, result, status, "no \"access_token\" in the response");
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
 * libcurl <-> epoll. */

static int
on_socket(CURL *easy, curl_socket_t fd, int what, void *user, void *socket_data)
{
    struct epoll_event event;
    (void)easy;
    (void)user;

    if (what == CURL_POLL_REMOVE) {
        /* The fd may already be closed; ENOENT/EBADF are fine. */
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, NULL);
        curl_multi_assign(multi, fd, NULL);
        return 0;
    }
    memset(&event, 0, sizeof(event));
    event.data.fd = fd;
    if (what & CURL_POLL_IN)
        event.events |= EPOLLIN;
    if (what & CURL_POLL_OUT)
        event.events |= EPOLLOUT;
    if (socket_data == NULL) {
        if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0 && errno == EEXIST)
            epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &event);
        /* Any non-NULL marker: "registered". */
        curl_multi_assign(multi, fd, &epoll_fd);
    } else if (epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &event) != 0 && errno == ENOENT) {
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
    }
    return 0;
}

static int
on_timer(CURLM *m, long timeout_ms, void *user)
{
    (void)m;
    (void)user;
    timer_deadline = timeout_ms < 0 ? -1 : now_seconds() + (double)timeout_ms / 1000.0;
    return 0;
}

static void
drain_messages(void)
{
    CURLMsg *message;
    int left;

    while ((message = curl_multi_info_read(multi, &left)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            struct session *s = NULL;
            curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            finished(s, message->data.result);
        }
    }
}

/* Runs the event loop until the monotonic clock passes UNTIL. */
static void
run_until(double until)
{
    struct epoll_event events[256];
    int running = 0;

    while (1) {
        double now = now_seconds();
        int wait_ms, n, i;

        if (now >= until)
            return;
        wait_ms = (int)((until - now) * 1000) + 1;
        if (timer_deadline >= 0) {
            double timer_wait = (timer_deadline - now) * 1000;
            if (timer_wait < wait_ms)
                wait_ms = timer_wait <= 0 ? 0 : (int)timer_wait + 1;
        }
        n = epoll_wait(epoll_fd, events, 256, wait_ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fatal("epoll_wait: %s", strerror(errno));
        }
        for (i = 0; i < n; i++) {
            int mask = 0;
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP))
                mask |= CURL_CSELECT_IN;
            if (events[i].events & EPOLLOUT)
                mask |= CURL_CSELECT_OUT;
            if (events[i].events & EPOLLERR)
                mask |= CURL_CSELECT_ERR;
            curl_multi_socket_action(multi, events[i].data.fd, mask, &running);
        }
        /* Checked even when sockets were busy, so that a steady stream of
         * events cannot starve libcurl's timers. */
        if (timer_deadline >= 0 && now_seconds() >= timer_deadline) {
            timer_deadline = -1;
            curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
        }
        drain_messages();
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

static void
setup_session(struct session *s)
{
    s->easy = curl_easy_init();
    if (s->easy == NULL)
        fatal("curl_easy_init failed");
    curl_easy_setopt(s->easy, CURLOPT_PRIVATE, (char *)s);
    curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(s->easy, CURLOPT_ERRORBUFFER, s->error);
    curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, TRANSFER_TIMEOUT_MS);
    curl_easy_setopt(s->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(s->easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(s->easy, CURLOPT_USERAGENT, "gatehouse-bench-login-driver");
    /* Straight to the loopback server whatever http_proxy says; this also
     * spares libcurl its proxy environment lookups on every request. */
    curl_easy_setopt(s->easy, CURLOPT_PROXY, "");
    if (config.mode == MODE_MOCK) {
        /* What Gatehouse does for every POST: never a pooled connection. */
        curl_easy_setopt(s->easy, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, token_headers);
    }
}

int
main(int argc, char **argv)
{
    double window_start, cpu_start, cpu_used;
    int i;

    parse_arguments(argc, argv);

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        fatal("curl_global_init failed");
    multi = curl_multi_init();
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (multi == NULL || epoll_fd < 0)
        fatal("cannot create the multi handle or epoll instance");
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    /* Room for every session's keep-alive connection, so none is closed
     * between two requests of a login. */
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)config.concurrency * 2);

    token_headers = curl_slist_append(NULL, "Accept: application/json");
    token_headers = curl_slist_append(token_headers, "Expect:");
    if (token_headers == NULL)
        fatal("out of memory");

    snprintf(start_url, sizeof(start_url),
             "%s/auth/%s?k=%s&d=http%%3A%%2F%%2Flocalhost%%2F&opts=%%7B%%22state%%22%%3A%%22s1%%22%%7D",
             config.base, config.provider, config.key);

    sessions = calloc((size_t)config.concurrency, sizeof(*sessions));
    if (sessions == NULL)
        fatal("out of memory");
    for (i = 0; i < config.concurrency; i++)
        setup_session(&sessions[i]);

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
