#ifndef GATEHOUSE_CHIREDIS_SHIM_H
#define GATEHOUSE_CHIREDIS_SHIM_H

#include <sys/time.h>
#include <hiredis/hiredis.h>

/* Pipelining: commands are appended to the output buffer, written together by the first
 * read, and their replies read back in order. NULL means the connection failed. The reply
 * comes back typed, so the wrapper never casts from `void *`. */
static inline int gh_redis_append(redisContext *context, int argc, const char **argv, const size_t *lengths) {
    return redisAppendCommandArgv(context, argc, argv, lengths);
}

static inline redisReply *gh_redis_next_reply(redisContext *context) {
    void *reply = NULL;
    if (redisGetReply(context, &reply) != REDIS_OK) {
        return NULL;
    }
    return (redisReply *)reply;
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
