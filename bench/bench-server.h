/*
 * bench-server.h: what the benchmarks' C servers (mhd-hello, login-mock,
 * apple-ceiling) share around their libmicrohttpd daemon: the port
 * argument, the thread count, a loopback address, fixed JSON answers, a
 * daemon started as Gatehouse starts its own, and a stop on SIGTERM/SIGINT. Each server is one .c file compiled on its own;
 * this header sits next to them and holds only static functions.
 */
#ifndef BENCH_SERVER_H
#define BENCH_SERVER_H

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* PORT from the command line: 1-65535, digits only. */
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

/* One daemon thread per CPU, as Gatehouse runs. */
static unsigned int
server_threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        return 1;
    return cpus > UINT_MAX ? UINT_MAX : (unsigned int)cpus;
}

/* 127.0.0.1:port, the only address the benchmark servers listen on. */
static struct sockaddr_in
loopback_address(uint16_t port)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

/* Blocks SIGTERM and SIGINT in the calling thread, which must be the main
 * thread before MHD spawns its own: they inherit the mask, so only
 * wait_for_stop() ever receives the signals (a handler running on a worker
 * thread could not safely call MHD_stop_daemon()). A shell starts background
 * jobs with SIGINT ignored; the default is restored so the signal reaches
 * sigwait() instead of being discarded. 0 on success. */
static int
block_stop_signals(sigset_t *stop_signals)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigemptyset(stop_signals);
    sigaddset(stop_signals, SIGTERM);
    sigaddset(stop_signals, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, stop_signals, NULL) != 0) {
        perror("pthread_sigmask");
        return -1;
    }
    return 0;
}

/* Returns once SIGTERM or SIGINT arrives. */
static void
wait_for_stop(const sigset_t *stop_signals)
{
    int sig = 0;
    if (sigwait(stop_signals, &sig) != 0)
        perror("sigwait");
}

/* A fixed application/json answer, created once and shared by every
 * connection. PERSISTENT: the body is static and must not be copied or
 * freed by MHD. NULL if MHD cannot create it. */
static struct MHD_Response *
static_json(const char *body, size_t length)
{
    struct MHD_Response *response =
        MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_PERSISTENT);
    if (response != NULL && MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                                                    "application/json") != MHD_YES) {
        MHD_destroy_response(response);
        response = NULL;
    }
    return response;
}

/* A daemon on 127.0.0.1:PORT with Gatehouse's flags and options (internal
 * epoll thread pool, one thread per CPU, suspend/resume, 30 s idle timeout),
 * so what it measures is the ceiling Gatehouse's own daemon works under.
 * One difference: Gatehouse accepts on its own thread and hands connections
 * over (MHD_add_connection), so that it can stop accepting before a drain;
 * these servers never drain and let libmicrohttpd accept. Once a keep-alive
 * connection is open, a request takes the same path either way.
 * MHD_USE_ERROR_LOG only adds diagnostics on stderr (why a bind failed, say).
 * COMPLETED may be NULL. Says on stderr, under NAME, where it listens or why
 * it could not start; NULL in that case. (login-mock, which plays a provider,
 * starts its own.) */
__attribute__((unused)) static struct MHD_Daemon *
start_gatehouse_like(const char *name, uint16_t port, MHD_AccessHandlerCallback handler,
                     void *handler_cls, MHD_RequestCompletedCallback completed)
{
    unsigned int threads = server_threads();
    struct sockaddr_in addr = loopback_address(port);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
            MHD_USE_ERROR_LOG,
        port, NULL, NULL, handler, handler_cls,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_END);
    if (daemon == NULL)
        fprintf(stderr, "%s: cannot start daemon on 127.0.0.1:%u\n", name, (unsigned)port);
    else
        fprintf(stderr, "%s: listening on 127.0.0.1:%u with %u threads\n", name, (unsigned)port,
                threads);
    return daemon;
}

#endif
