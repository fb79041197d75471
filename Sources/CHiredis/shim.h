#ifndef GATEHOUSE_CHIREDIS_SHIM_H
#define GATEHOUSE_CHIREDIS_SHIM_H

#include <sys/time.h>
#include <hiredis/hiredis.h>

/* The reply type constants are #defines in read.h; they import, but typed accessors keep the
 * wrapper free of casts from `void *` (redisCommandArgv returns an untyped reply). */
static inline redisReply *gh_redis_command(redisContext *context, int argc, const char **argv, const size_t *lengths) {
    return (redisReply *)redisCommandArgv(context, argc, argv, lengths);
}

/* Connects with a connect timeout and applies the same limit to every later read and write,
 * so a stalled server cannot hold a connection thread longer than `milliseconds`. */
static inline redisContext *gh_redis_connect(const char *host, int port, long milliseconds) {
    struct timeval limit = { milliseconds / 1000, (milliseconds % 1000) * 1000 };
    redisContext *context = redisConnectWithTimeout(host, port, limit);
    if (context != NULL && context->err == 0) {
        redisSetTimeout(context, limit);
        redisEnableKeepAlive(context);
    }
    return context;
}

#endif
