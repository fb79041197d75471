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
#include "bench-server.h"

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

int
main(int argc, char **argv)
{
    struct MHD_Response *response;
    struct MHD_Daemon *daemon;
    sigset_t stop_signals;
    uint16_t port;

    if (argc != 2 || parse_port(argv[1], &port) != 0) {
        fprintf(stderr, "usage: %s PORT (1-65535)\n", argc > 0 ? argv[0] : "mhd-hello");
        return 2;
    }
    if (block_stop_signals(&stop_signals) != 0)
        return 1;

    /* Created once and shared by every connection, so per-request cost is
     * only MHD's own. */
    response = static_json(BODY, sizeof(BODY) - 1);
    if (response == NULL) {
        fprintf(stderr, "mhd-hello: cannot create response\n");
        return 1;
    }

    daemon = start_gatehouse_like("mhd-hello", port, on_request, response, NULL);
    if (daemon == NULL) {
        MHD_destroy_response(response);
        return 1;
    }

    wait_for_stop(&stop_signals);

    MHD_stop_daemon(daemon);
    MHD_destroy_response(response);
    return 0;
}
