#ifndef GATEHOUSE_CMICROHTTPD_SHIM_H
#define GATEHOUSE_CMICROHTTPD_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/select.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <microhttpd.h>

/* MHD leaves the path and query arguments as they came off the wire when this
 * callback returns the length unchanged. The router needs the raw path so that an
 * encoded '/' inside a segment (the /request proxy's URL) stays one segment; the
 * Swift side percent-decodes each piece itself. */
static inline size_t gh_mhd_keep_escaped(void *cls, struct MHD_Connection *c, char *s) {
    (void)cls; (void)c;
    return strlen(s);
}

/* MHD_start_daemon is variadic, which Swift cannot call: this fixes the option list
 * Gatehouse uses and takes the rest as an MHD_OPTION_ARRAY built in Swift. The daemon
 * has no listen socket of its own: Gatehouse accepts and hands connections over with
 * MHD_add_connection (see Listener.swift for why). */
static inline struct MHD_Daemon *gh_mhd_start(unsigned int flags,
                                              MHD_AccessHandlerCallback handler, void *handler_context,
                                              MHD_RequestCompletedCallback completed, void *completed_context,
                                              struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_UNESCAPE_CALLBACK, gh_mhd_keep_escaped, NULL,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/* accept4 and pipe2 are GNU extensions, which glibc declares only under _GNU_SOURCE;
 * the listener needs both so that its descriptors are not inherited by child processes. */
#ifndef _GNU_SOURCE
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
extern int pipe2(int descriptors[2], int flags);
#endif

static inline int gh_accept_cloexec(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_CLOEXEC);
}

static inline int gh_pipe_cloexec(int descriptors[2]) {
    return pipe2(descriptors, O_CLOEXEC);
}

/* MHD_get_connection_info is variadic and returns a union: this copies the peer's
 * address bytes (4 for IPv4, 16 for IPv6) and returns their count, 0 when unknown. Text
 * formatting is left to Swift, to be done only when something reads it. */
static inline int gh_mhd_client_address(struct MHD_Connection *connection, uint8_t bytes[16]) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr) return 0;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET) {
        memcpy(bytes, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return 4;
    }
    if (sa->sa_family == AF_INET6) {
        memcpy(bytes, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

#endif
