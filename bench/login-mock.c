/*
 * login-mock: the OAuth 2 provider (and the driver's "echo" target) for
 * bench/login-flow.
 *
 * A libmicrohttpd server on 127.0.0.1 with one thread per CPU and epoll, like
 * bench/mhd-hello.c. It has to stay far cheaper than Gatehouse, because the
 * benchmark charges every CPU cycle it burns to the machine Gatehouse runs on.
 *
 * Routes:
 *   POST /oauth2/token        the provider's token endpoint. Gatehouse keeps its
 *                             connections alive (a few hundred carry millions of
 *                             calls), so TCP setup is rare here. The form body
 *                             is read and checked (grant_type, code,
 *                             redirect_uri, client_id, client_secret);
 *                             the answer is a JSON token, or a 400 JSON error.
 *   GET  /healthz             readiness probe.
 *   GET  /stats               counters as JSON (token calls, bad token calls,
 *                             TCP connections accepted).
 *   GET  /auth/benchmock      \
 *   GET  /auth                 | canned imitations of Gatehouse's three login
 *   POST /auth/access_token   /  responses, so that the load driver can run
 *                             its real login loop with (almost) no server
 *                             work behind it: bench/login-flow's "driver
 *                             alone" row.
 *   anything else             404.
 *
 * Usage: login-mock PORT   (listens on 127.0.0.1 only; stops on SIGTERM/SIGINT)
 */
#define _GNU_SOURCE
#include <stdatomic.h>

#include "bench-server.h"

/* The longest token request body that is kept for checking. Gatehouse's is
 * about 200 bytes; longer bodies are still drained, and then refused. */
#define BODY_CAPACITY 2048

enum route {
    ROUTE_NOT_FOUND,
    ROUTE_TOKEN,
    ROUTE_HEALTHZ,
    ROUTE_STATS,
    ROUTE_ECHO_START,
    ROUTE_ECHO_CALLBACK,
    ROUTE_ECHO_REDEEM,
};

/* Per-request state for routes that read a body. GET routes need no
 * allocation: their marker is a pointer into ROUTE_MARKERS. */
struct upload {
    enum route route;
    size_t length;
    int truncated;
    char body[BODY_CAPACITY + 1];
};

static enum route route_markers[ROUTE_ECHO_REDEEM + 1];

static uint16_t listen_port;
static atomic_ulong token_calls;
static atomic_ulong bad_token_calls;
static atomic_ulong connections;
static atomic_ulong echo_serial;

static struct MHD_Response *healthz_response;
static struct MHD_Response *not_found_response;

static const char HEALTHZ_BODY[] = "{\"status\":\"ok\"}";
static const char NOT_FOUND_BODY[] = "{\"error\":\"not_found\"}";

static enum route
route_of(const char *method, const char *url)
{
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
    int post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;

    if (post && strcmp(url, "/oauth2/token") == 0)
        return ROUTE_TOKEN;
    if (get && strcmp(url, "/healthz") == 0)
        return ROUTE_HEALTHZ;
    if (get && strcmp(url, "/stats") == 0)
        return ROUTE_STATS;
    if (get && strcmp(url, "/auth/benchmock") == 0)
        return ROUTE_ECHO_START;
    if (get && strcmp(url, "/auth") == 0)
        return ROUTE_ECHO_CALLBACK;
    if (post && strcmp(url, "/auth/access_token") == 0)
        return ROUTE_ECHO_REDEEM;
    return ROUTE_NOT_FOUND;
}

/* Queues a response built from BODY (copied) and releases our reference;
 * MHD keeps its own until the response is sent. */
static enum MHD_Result
answer(struct MHD_Connection *connection, unsigned int status, const char *content_type,
       const char *body, size_t length, const char *location)
{
    struct MHD_Response *response;
    enum MHD_Result result;

    response = MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL)
        return MHD_NO;
    if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) != MHD_YES ||
        (location != NULL &&
         MHD_add_response_header(response, MHD_HTTP_HEADER_LOCATION, location) != MHD_YES)) {
        MHD_destroy_response(response);
        return MHD_NO;
    }
    result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

/* Value of form field NAME in the NUL-terminated urlencoded BODY, without
 * decoding; sets *LENGTH. NULL when absent. */
static const char *
form_field(const char *body, const char *name, size_t *length)
{
    size_t name_length = strlen(name);
    const char *p = body;

    while (*p != '\0') {
        const char *end = strchrnul(p, '&');
        if ((size_t)(end - p) > name_length && strncmp(p, name, name_length) == 0 &&
            p[name_length] == '=') {
            *length = (size_t)(end - p) - name_length - 1;
            return p + name_length + 1;
        }
        p = *end == '&' ? end + 1 : end;
    }
    return NULL;
}

static int
field_equals(const char *body, const char *name, const char *expected)
{
    size_t length;
    const char *value = form_field(body, name, &length);
    return value != NULL && length == strlen(expected) && memcmp(value, expected, length) == 0;
}

static int
field_present(const char *body, const char *name)
{
    size_t length;
    return form_field(body, name, &length) != NULL && length > 0;
}

/* What the benchmark's keyset and provider.json make Gatehouse send. */
static const char *
token_request_problem(const struct upload *upload)
{
    const char *body = upload->body;

    if (upload->truncated)
        return "request body too long";
    if (!field_equals(body, "grant_type", "authorization_code"))
        return "grant_type must be authorization_code";
    if (!field_present(body, "code"))
        return "code missing";
    if (!field_present(body, "redirect_uri"))
        return "redirect_uri missing";
    if (!field_equals(body, "client_id", "bench-client"))
        return "client_id must be bench-client";
    if (!field_equals(body, "client_secret", "bench-secret"))
        return "client_secret must be bench-secret";
    return NULL;
}

static enum MHD_Result
answer_token(struct MHD_Connection *connection, const struct upload *upload)
{
    char body[256];
    const char *problem = token_request_problem(upload);
    unsigned long n;
    int length;

    if (problem != NULL) {
        unsigned long bad = atomic_fetch_add_explicit(&bad_token_calls, 1, memory_order_relaxed);
        if (bad == 0) {
            /* Once is enough to diagnose; bench/login-flow prints the log. */
            fprintf(stderr, "login-mock: refused a token request (%s): %.300s\n", problem,
                    upload->body);
        }
        length = snprintf(body, sizeof(body),
                          "{\"error\":\"invalid_request\",\"error_description\":\"%s\"}", problem);
        return answer(connection, MHD_HTTP_BAD_REQUEST, "application/json", body,
                      (size_t)length, NULL);
    }
    n = atomic_fetch_add_explicit(&token_calls, 1, memory_order_relaxed) + 1;
    length = snprintf(body, sizeof(body),
                      "{\"access_token\":\"at-%lu\",\"token_type\":\"bearer\","
                      "\"expires_in\":3600,\"refresh_token\":\"rt-%lu\"}",
                      n, n);
    return answer(connection, MHD_HTTP_OK, "application/json", body, (size_t)length, NULL);
}

static enum MHD_Result
answer_stats(struct MHD_Connection *connection)
{
    char body[256];
    int length = snprintf(
        body, sizeof(body), "{\"token_calls\":%lu,\"bad_token_calls\":%lu,\"connections\":%lu}",
        atomic_load_explicit(&token_calls, memory_order_relaxed),
        atomic_load_explicit(&bad_token_calls, memory_order_relaxed),
        atomic_load_explicit(&connections, memory_order_relaxed));
    return answer(connection, MHD_HTTP_OK, "application/json", body, (size_t)length, NULL);
}

/* A 27-character base64url identifier, shaped like Gatehouse's, derived from
 * a counter (uniqueness is all the driver can observe). */
static void
make_identifier(char out[28], unsigned long serial)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint64_t x = 0;
    int i;

    for (i = 0; i < 27; i++) {
        if (i % 10 == 0) {
            /* splitmix64 of (serial, block): 60 fresh bits per 10 chars. */
            x = (uint64_t)serial * 4 + (uint64_t)(i / 10) + 1;
            x *= 0x9E3779B97F4A7C15u;
            x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
            x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
            x ^= x >> 31;
        }
        out[i] = alphabet[x & 63];
        x >>= 6;
    }
    out[27] = '\0';
}

/* The echo routes answer with responses of the same shape (and roughly the
 * same size) as Gatehouse's, without storage, crypto or an outbound call. */
static enum MHD_Result
answer_echo(struct MHD_Connection *connection, enum route route)
{
    char id[28];
    char text[1600];
    int length;
    unsigned long n = atomic_fetch_add_explicit(&echo_serial, 1, memory_order_relaxed);

    make_identifier(id, n);
    switch (route) {
    case ROUTE_ECHO_START:
        length = snprintf(text, sizeof(text),
                          "http://127.0.0.1:%u/oauth2/authorize?client_id=bench-client"
                          "&redirect_uri=http%%3A%%2F%%2F127.0.0.1%%2Fauth&response_type=code"
                          "&state=%s",
                          (unsigned)listen_port, id);
        if (length < 0 || (size_t)length >= sizeof(text))
            return MHD_NO;
        return answer(connection, MHD_HTTP_FOUND, "text/plain", "", 0, text);
    case ROUTE_ECHO_CALLBACK:
        length = snprintf(
            text, sizeof(text),
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Signing in</title>"
            "</head>\n<body><p>Your browser does not support popups. <a href=\"http://localhost\">"
            "Return to the site</a>.</p>\n<script nonce=\"%s\">\nvar msg = \"{\\\"status\\\":"
            "\\\"success\\\",\\\"state\\\":\\\"s1\\\",\\\"provider\\\":\\\"benchmock\\\","
            "\\\"data\\\":{\\\"access_token\\\":\\\"at-%lu\\\",\\\"token_type\\\":\\\"bearer\\\","
            "\\\"expires_in\\\":3600,\\\"request\\\":{\\\"url\\\":\\\"http://127.0.0.1:%u\\\"},"
            "\\\"code\\\":\\\"%s\\\"}}\";\nvar origin = \"http://localhost\";\n"
            "var opener = window.opener || (window.parent && window.parent.opener);\n"
            "if (opener) { opener.postMessage(msg, origin); }\nwindow.close();\n</script>\n"
            "</body></html>",
            id, n, (unsigned)listen_port, id);
        if (length < 0 || (size_t)length >= sizeof(text))
            return MHD_NO;
        return answer(connection, MHD_HTTP_OK, "text/html; charset=utf-8", text, (size_t)length,
                      NULL);
    default:
        length = snprintf(text, sizeof(text),
                          "{\"access_token\":\"at-%lu\",\"token_type\":\"bearer\",\"expires_in\":"
                          "3600,\"refresh_token\":\"rt-%lu\",\"request\":{\"url\":"
                          "\"http://127.0.0.1:%u\"},\"state\":\"s1\",\"provider\":\"benchmock\"}",
                          n, n, (unsigned)listen_port);
        if (length < 0 || (size_t)length >= sizeof(text))
            return MHD_NO;
        return answer(connection, MHD_HTTP_OK, "application/json", text, (size_t)length, NULL);
    }
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
           const char *version, const char *upload_data, size_t *upload_data_size,
           void **con_cls)
{
    enum route route;
    (void)cls;
    (void)version;

    /* First callback: headers only. Answering here would make MHD 0.9.75
     * close the connection (see mhd-hello.c), so just remember the route. */
    if (*con_cls == NULL) {
        route = route_of(method, url);
        if (route == ROUTE_TOKEN || route == ROUTE_ECHO_REDEEM) {
            struct upload *upload = malloc(sizeof(*upload));
            if (upload == NULL)
                return MHD_NO;
            upload->route = route;
            upload->length = 0;
            upload->truncated = 0;
            upload->body[0] = '\0';
            *con_cls = upload;
        } else {
            *con_cls = &route_markers[route];
        }
        return MHD_YES;
    }

    if (*con_cls >= (void *)&route_markers[0] &&
        *con_cls <= (void *)&route_markers[ROUTE_ECHO_REDEEM]) {
        route = (enum route)((enum route *)*con_cls - route_markers);
        /* Drain any unexpected body before answering. */
        if (*upload_data_size != 0) {
            *upload_data_size = 0;
            return MHD_YES;
        }
    } else {
        struct upload *upload = *con_cls;
        if (*upload_data_size != 0) {
            size_t room = BODY_CAPACITY - upload->length;
            size_t take = *upload_data_size < room ? *upload_data_size : room;
            memcpy(upload->body + upload->length, upload_data, take);
            upload->length += take;
            upload->body[upload->length] = '\0';
            if (take < *upload_data_size)
                upload->truncated = 1;
            *upload_data_size = 0;
            return MHD_YES;
        }
        if (upload->route == ROUTE_TOKEN)
            return answer_token(connection, upload);
        return answer_echo(connection, upload->route);
    }

    switch (route) {
    case ROUTE_HEALTHZ:
        return MHD_queue_response(connection, MHD_HTTP_OK, healthz_response);
    case ROUTE_STATS:
        return answer_stats(connection);
    case ROUTE_ECHO_START:
    case ROUTE_ECHO_CALLBACK:
        return answer_echo(connection, route);
    default:
        return MHD_queue_response(connection, MHD_HTTP_NOT_FOUND, not_found_response);
    }
}

static void
on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
             enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)connection;
    (void)code;
    if (*con_cls != NULL && (*con_cls < (void *)&route_markers[0] ||
                             *con_cls > (void *)&route_markers[ROUTE_ECHO_REDEEM]))
        free(*con_cls);
    *con_cls = NULL;
}

static void
on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
              enum MHD_ConnectionNotificationCode code)
{
    (void)cls;
    (void)connection;
    (void)socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add_explicit(&connections, 1, memory_order_relaxed);
}

int
main(int argc, char **argv)
{
    struct sockaddr_in addr;
    struct MHD_Daemon *daemon;
    sigset_t stop_signals;
    unsigned int threads = server_threads();

    if (argc != 2 || parse_port(argv[1], &listen_port) != 0) {
        fprintf(stderr, "usage: %s PORT (1-65535)\n", argc > 0 ? argv[0] : "login-mock");
        return 2;
    }
    if (block_stop_signals(&stop_signals) != 0)
        return 1;

    healthz_response = static_json(HEALTHZ_BODY, sizeof(HEALTHZ_BODY) - 1);
    not_found_response = static_json(NOT_FOUND_BODY, sizeof(NOT_FOUND_BODY) - 1);
    if (healthz_response == NULL || not_found_response == NULL) {
        fprintf(stderr, "login-mock: cannot create responses\n");
        return 1;
    }

    addr = loopback_address(listen_port);

    /* Thread pool + epoll like Gatehouse and mhd-hello. Gatehouse keeps its
     * connections here alive, but the backlog and the connection limit stay
     * far above what its client pool can hold, so a client that does not
     * (curl in the script's probes, a future driver mode) never queues. Every
     * request head here is a few hundred bytes, and libmicrohttpd zeroes a
     * connection's whole memory pool (32 KiB by default) for each request, so
     * the pool is 8 KiB. */
    daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, listen_port, NULL,
        NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned int)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)8192,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)4096, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)8192, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL, MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "login-mock: cannot start daemon on 127.0.0.1:%u\n",
                (unsigned)listen_port);
        return 1;
    }

    fprintf(stderr, "login-mock: listening on 127.0.0.1:%u with %u threads\n",
            (unsigned)listen_port, threads);

    wait_for_stop(&stop_signals);

    MHD_stop_daemon(daemon);
    fprintf(stderr, "login-mock: %lu token calls, %lu refused, %lu connections\n",
            atomic_load(&token_calls), atomic_load(&bad_token_calls), atomic_load(&connections));
    MHD_destroy_response(healthz_response);
    MHD_destroy_response(not_found_response);
    return 0;
}
