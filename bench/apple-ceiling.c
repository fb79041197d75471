/*
 * apple-ceiling: the C reference row of bench/apple-verify.
 *
 * The least any server must do for `POST /auth/apple/native` in backend mode:
 * read the JSON body, find "identity_token", split the compact JWS and check
 * its RS256 signature with OpenSSL against one RSA key loaded at start. It
 * answers 200 with a fixed body when the signature holds and 401 otherwise.
 * It skips everything else Gatehouse does (JSON parsing, the app and keyset,
 * the claims, the profile in the answer), so its rate is a ceiling: what the
 * HTTP library, the kernel and one RSA verification leave on this machine
 * when wrk shares it. The daemon runs with the same flags as Gatehouse's.
 *
 * Usage: apple-ceiling PORT N E
 *   N, E: the RSA key's modulus and exponent, base64url as in a JWK.
 * Listens on 127.0.0.1 only; stops on SIGTERM/SIGINT.
 */
#define _GNU_SOURCE /* memmem */
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "bench-server.h"

/* Apple's identity tokens are 1-2 KiB; a body beyond this is refused. */
#define MAX_BODY 16384

static const char OK_BODY[] = "{\"status\":\"ok\"}";
static const char REFUSED_BODY[] = "{\"status\":\"fail\"}";

static EVP_PKEY *key;
/* Set up once for RS256 with key; each request verifies with a copy of it,
 * as Gatehouse does, so that neither pays for OpenSSL's lookup of the
 * signature and digest implementations on every request. */
static EVP_MD_CTX *prepared;
static struct MHD_Response *ok_response;
static struct MHD_Response *refused_response;

struct body {
    size_t size;
    int too_large;
    char bytes[MAX_BODY];
};

static int
sextet(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}

/* Unpadded base64url into out (room for len * 3 / 4 bytes); -1 if malformed. */
static long
b64url_decode(const char *in, size_t len, unsigned char *out)
{
    size_t i, n = 0;
    unsigned int acc = 0;
    int bits = 0;

    if (len % 4 == 1) return -1;
    for (i = 0; i < len; i++) {
        int v = sextet((unsigned char)in[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (unsigned int)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return (long)n;
}

/* 1 when body holds "identity_token":"<JWS>" whose RS256 signature verifies. */
static int
verified(const char *body, size_t size)
{
    static const char field[] = "\"identity_token\":\"";
    const char *token, *end, *first, *second;
    unsigned char signature[1024];
    EVP_MD_CTX *ctx;
    long signature_size;
    int ok;

    token = memmem(body, size, field, sizeof(field) - 1);
    if (token == NULL) return 0;
    token += sizeof(field) - 1;
    end = memchr(token, '"', size - (size_t)(token - body));
    if (end == NULL) return 0;
    first = memchr(token, '.', (size_t)(end - token));
    if (first == NULL) return 0;
    second = memchr(first + 1, '.', (size_t)(end - first - 1));
    if (second == NULL || (size_t)(end - second - 1) * 3 / 4 > sizeof(signature)) return 0;
    signature_size = b64url_decode(second + 1, (size_t)(end - second - 1), signature);
    if (signature_size <= 0) return 0;

    ctx = EVP_MD_CTX_new();
    if (ctx == NULL) return 0;
    ok = EVP_MD_CTX_copy_ex(ctx, prepared) == 1;
    /* One verification per copy: spares EVP_DigestVerifyFinal another copy. */
    EVP_MD_CTX_set_flags(ctx, EVP_MD_CTX_FLAG_FINALISE);
    ok = ok &&
         EVP_DigestVerify(ctx, signature, (size_t)signature_size, (const unsigned char *)token,
                          (size_t)(second - token)) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *connection, const char *url,
           const char *method, const char *version, const char *upload_data,
           size_t *upload_data_size, void **con_cls)
{
    struct body *body = *con_cls;
    (void)cls;
    (void)url;
    (void)version;

    /* As in mhd-hello and Gatehouse: never answer on the first callback, or
     * MHD 0.9.75 closes the keep-alive connection. */
    /* GET is the benchmark's readiness probe. */
    if (strcmp(method, MHD_HTTP_METHOD_GET) == 0 && *upload_data_size == 0 && body != NULL)
        return MHD_queue_response(connection, MHD_HTTP_OK, ok_response);
    if (body == NULL) {
        body = malloc(sizeof(*body));
        if (body == NULL) return MHD_NO;
        body->size = 0;
        body->too_large = 0;
        *con_cls = body;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        if (body->size + *upload_data_size > MAX_BODY) {
            body->too_large = 1;
        } else {
            memcpy(body->bytes + body->size, upload_data, *upload_data_size);
            body->size += *upload_data_size;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!body->too_large && verified(body->bytes, body->size))
        return MHD_queue_response(connection, MHD_HTTP_OK, ok_response);
    return MHD_queue_response(connection, MHD_HTTP_UNAUTHORIZED, refused_response);
}

static void
on_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
             enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)connection;
    (void)code;
    free(*con_cls);
    *con_cls = NULL;
}

/* The RSA public key with modulus n and exponent e (base64url), or NULL. */
static EVP_PKEY *
rsa_key(const char *n64, const char *e64)
{
    unsigned char n[1024], e[16];
    long n_size, e_size;
    BIGNUM *bn_n = NULL, *bn_e = NULL;
    OSSL_PARAM_BLD *build = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *result = NULL;

    if (strlen(n64) * 3 / 4 > sizeof(n) || strlen(e64) * 3 / 4 > sizeof(e)) return NULL;
    n_size = b64url_decode(n64, strlen(n64), n);
    e_size = b64url_decode(e64, strlen(e64), e);
    if (n_size <= 0 || e_size <= 0) return NULL;
    bn_n = BN_bin2bn(n, (int)n_size, NULL);
    bn_e = BN_bin2bn(e, (int)e_size, NULL);
    build = OSSL_PARAM_BLD_new();
    if (bn_n != NULL && bn_e != NULL && build != NULL &&
        OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1 &&
        OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1 &&
        (params = OSSL_PARAM_BLD_to_param(build)) != NULL &&
        (ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) != NULL &&
        EVP_PKEY_fromdata_init(ctx) == 1)
        EVP_PKEY_fromdata(ctx, &result, EVP_PKEY_PUBLIC_KEY, params);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(build);
    BN_free(bn_n);
    BN_free(bn_e);
    return result;
}

int
main(int argc, char **argv)
{
    struct MHD_Daemon *daemon;
    sigset_t stop_signals;
    uint16_t port;

    if (argc != 4 || parse_port(argv[1], &port) != 0) {
        fprintf(stderr, "usage: %s PORT N E\n", argc > 0 ? argv[0] : "apple-ceiling");
        return 2;
    }
    key = rsa_key(argv[2], argv[3]);
    prepared = EVP_MD_CTX_new();
    if (key == NULL || prepared == NULL ||
        EVP_DigestVerifyInit_ex(prepared, NULL, "SHA256", NULL, NULL, key, NULL) != 1) {
        fprintf(stderr, "apple-ceiling: cannot load the RSA key\n");
        return 1;
    }
    ok_response = static_json(OK_BODY, sizeof(OK_BODY) - 1);
    refused_response = static_json(REFUSED_BODY, sizeof(REFUSED_BODY) - 1);
    if (ok_response == NULL || refused_response == NULL) {
        fprintf(stderr, "apple-ceiling: cannot create the responses\n");
        return 1;
    }
    if (block_stop_signals(&stop_signals) != 0)
        return 1;

    daemon = start_gatehouse_like("apple-ceiling", port, on_request, NULL, on_completed);
    if (daemon == NULL)
        return 1;

    wait_for_stop(&stop_signals);

    MHD_stop_daemon(daemon);
    MHD_destroy_response(ok_response);
    MHD_destroy_response(refused_response);
    EVP_MD_CTX_free(prepared);
    EVP_PKEY_free(key);
    return 0;
}
