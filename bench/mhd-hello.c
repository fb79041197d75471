/*
 * mhd-hello: the "bare" side of bench/http-baseline.
 *
 * A libmicrohttpd server that does no work per request, started with the same
 * daemon flags and options as Gatehouse's HTTP server. Its throughput is the
 * ceiling Gatehouse's /healthz is compared against, so anything that changes
 * MHD's behaviour (threading, polling backend, keep-alive) has to match
 * Gatehouse, while anything that only costs time per request must stay out.
 *
 * Usage: mhd-hello PORT   (listens on 127.0.0.1 only; stops on SIGTERM/SIGINT)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char BODY[] = "{\"status\":\"ok\"}";

/* Only its address matters: it tells the second callback that the headers
 * have already been seen once. */
static int request_marker;

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *connection, const char *url,
           const char *method, const char *version, const char *upload_data,
           size_t *upload_data_size, void **con_cls)
{
    struct MHD_Response *response = cls;
    (void)url;
    (void)method;
    (void)version;
    (void)upload_data;

    /* MHD 0.9.75 closes the connection after a response queued on the very
     * first callback, which would turn the benchmark into a TCP-connect
     * benchmark. Deferring to the second callback keeps keep-alive working,
     * and Gatehouse does the same. */
    if (*con_cls == NULL) {
        *con_cls = &request_marker;
        return MHD_YES;
    }

    /* A body is not expected, but it must be drained before MHD will let us
     * answer; discarding it keeps stray POSTs from stalling a connection. */
    if (*upload_data_size != 0) {
        *upload_data_size = 0;
        return MHD_YES;
    }

    return MHD_queue_response(connection, MHD_HTTP_OK, response);
}

static int
parse_port(const char *text, uint16_t *port)
{
    char *end = NULL;
    long value;

    errno = 0;
    value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 1 || value > 65535)
        return -1;
    *port = (uint16_t)value;
    return 0;
}

int
main(int argc, char **argv)
{
    struct sockaddr_in addr;
    struct MHD_Response *response;
    struct MHD_Daemon *daemon;
    sigset_t stop_signals;
    long cpus;
    uint16_t port;
    int sig = 0;

    if (argc != 2 || parse_port(argv[1], &port) != 0) {
        fprintf(stderr, "usage: %s PORT (1-65535)\n", argc > 0 ? argv[0] : "mhd-hello");
        return 2;
    }

    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    if (cpus > UINT_MAX)
        cpus = UINT_MAX;

    /* Block the stop signals before MHD spawns its threads so they inherit
     * the mask and only sigwait() below ever receives them; a handler running
     * on a worker thread could not safely call MHD_stop_daemon(). */
    /* A shell starts background jobs with SIGINT ignored; restore the default
     * so the signal is delivered to sigwait() rather than discarded. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &stop_signals, NULL) != 0) {
        perror("pthread_sigmask");
        return 1;
    }

    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    /* Created once and shared by every connection, so per-request cost is
     * only MHD's own. PERSISTENT: the body is static and must not be copied
     * or freed by MHD. */
    response = MHD_create_response_from_buffer(sizeof(BODY) - 1, (void *)BODY,
                                               MHD_RESPMEM_PERSISTENT);
    if (response == NULL ||
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                                "application/json") != MHD_YES) {
        fprintf(stderr, "mhd-hello: cannot create response\n");
        return 1;
    }

    /* Same flags and options as Gatehouse. MHD_USE_ERROR_LOG only adds
     * diagnostics on stderr (e.g. why the bind failed); it does not change
     * request handling. */
    daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
            MHD_USE_ERROR_LOG,
        port, NULL, NULL, on_request, response,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)cpus,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "mhd-hello: cannot start daemon on 127.0.0.1:%u\n", (unsigned)port);
        MHD_destroy_response(response);
        return 1;
    }

    fprintf(stderr, "mhd-hello: listening on 127.0.0.1:%u with %ld threads\n",
            (unsigned)port, cpus);

    if (sigwait(&stop_signals, &sig) != 0)
        perror("sigwait");

    MHD_stop_daemon(daemon);
    MHD_destroy_response(response);
    return 0;
}
