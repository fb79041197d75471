#ifndef GATEHOUSE_COPENSSL_SHIM_H
#define GATEHOUSE_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/core_names.h>

/* EVP_CTRL_GCM_* are plain enum-like macros, but the tag length and IV length
 * controls are clearer as named calls than as magic numbers in Swift. */
static inline int gh_gcm_set_tag(EVP_CIPHER_CTX *ctx, int length, void *tag) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, length, tag);
}

static inline int gh_gcm_get_tag(EVP_CIPHER_CTX *ctx, int length, void *tag) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, length, tag);
}

#endif
