/*
 * proxy-mock: the provider API behind bench/proxy.
 *
 * A libmicrohttpd server on 127.0.0.1 (one thread per CPU, epoll), cheap enough that the
 * benchmark measures Gatehouse rather than the mock. The same process answers both the
 * direct run and the run through Gatehouse's /request, so the two rows compare like with
 * like.
 *
 * Routes:
 *   GET /v1/me?access_token=bench-user-token   a ~400-byte JSON profile (the Graph API
 *                                              shape); 401 with Graph's error object when
 *                                              the token is missing or wrong.
 *   GET /healthz                               readiness probe.
 *   GET /stats                                 {"ok":N,"unauthorized":N,"connections":N}
 *   anything else                              404.
 *
 * Usage: proxy-mock PORT   (stops on SIGTERM/SIGINT)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char PROFILE[] =
    "{\"id\":\"10158253215623784\",\"name\":\"Ada Lovelace\",\"first_name\":\"Ada\",\"last_name\":\"Lovelace\","
    "\"email\":\"ada@example.com\",\"picture\":{\"data\":{\"height\":200,\"is_silhouette\":false,\"width\":200,"
    "\"url\":\"https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=10158253215623784&height=200\"}},"
    "\"gender\":\"female\",\"locale\":\"en_GB\",\"location\":{\"id\":\"106078429431815\",\"name\":\"London, United Kingdom\"},"
    "\"birthday\":\"12/10/1815\"}";
static const char UNAUTHORIZED[] =
    "{\"error\":{\"message\":\"Invalid OAuth access token\",\"type\":\"OAuthException\",\"code\":190}}";
static const char TOKEN[] = "bench-user-token";

static atomic_long ok_count, unauthorized_count, connections;
static struct MHD_Response *profile_response, *unauthorized_response, *not_found_response, *healthz_response;
static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context, enum MHD_ConnectionNotificationCode code) {
    (void)cls; (void)c; (void)socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) atomic_fetch_add(&connections, 1);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
                              const char *data, size_t *size, void **state) {
    (void)cls; (void)version; (void)data; (void)size;
    static int marker;
    if (*state == NULL) { *state = &marker; return MHD_YES; }
    if (strcmp(method, "GET") != 0) return MHD_queue_response(c, MHD_HTTP_NOT_FOUND, not_found_response);
    if (strcmp(url, "/v1/me") == 0) {
        const char *token = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "access_token");
        if (token != NULL && strcmp(token, TOKEN) == 0) {
            atomic_fetch_add(&ok_count, 1);
            return MHD_queue_response(c, MHD_HTTP_OK, profile_response);
        }
        atomic_fetch_add(&unauthorized_count, 1);
        return MHD_queue_response(c, MHD_HTTP_UNAUTHORIZED, unauthorized_response);
    }
    if (strcmp(url, "/healthz") == 0) return MHD_queue_response(c, MHD_HTTP_OK, healthz_response);
    if (strcmp(url, "/stats") == 0) {
        char body[160];
        int length = snprintf(body, sizeof body, "{\"ok\":%ld,\"unauthorized\":%ld,\"connections\":%ld}\n",
                              atomic_load(&ok_count), atomic_load(&unauthorized_count), atomic_load(&connections));
        struct MHD_Response *r = MHD_create_response_from_buffer((size_t)length, body, MHD_RESPMEM_MUST_COPY);
        MHD_add_response_header(r, "Content-Type", "application/json");
        enum MHD_Result result = MHD_queue_response(c, MHD_HTTP_OK, r);
        MHD_destroy_response(r);
        return result;
    }
    return MHD_queue_response(c, MHD_HTTP_NOT_FOUND, not_found_response);
}

static struct MHD_Response *json(const char *text) {
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json; charset=UTF-8");
    return r;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: proxy-mock PORT\n"); return 2; }
    int port = atoi(argv[1]);
    if (port <= 0 || port > 65535) { fprintf(stderr, "bad port\n"); return 2; }
    profile_response = json(PROFILE);
    unauthorized_response = json(UNAUTHORIZED);
    not_found_response = json("{\"error\":\"not found\"}");
    healthz_response = json("{\"status\":\"ok\"}");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)port, NULL, NULL, handle, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address, MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(cpus > 0 ? cpus : 1),
        MHD_OPTION_CONNECTION_LIMIT, 4096u, MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
        MHD_OPTION_END);
    if (daemon == NULL) { fprintf(stderr, "proxy-mock: cannot listen on 127.0.0.1:%d\n", port); return 1; }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    while (!stop) pause();
    MHD_stop_daemon(daemon);
    return 0;
}
