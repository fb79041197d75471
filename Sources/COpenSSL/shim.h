#ifndef GATEHOUSE_COPENSSL_SHIM_H
#define GATEHOUSE_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/core_names.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/rsa.h>
#include <openssl/param_build.h>
#include <openssl/provider.h>

/* EVP_CTRL_GCM_* are plain enum-like macros, but the tag length and IV length
 * controls are clearer as named calls than as magic numbers in Swift. */
static inline int gh_gcm_set_tag(EVP_CIPHER_CTX *ctx, int length, void *tag) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, length, tag);
}

static inline int gh_gcm_get_tag(EVP_CIPHER_CTX *ctx, int length, void *tag) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, length, tag);
}

static inline int gh_gcm_set_iv_length(EVP_CIPHER_CTX *ctx, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, length, NULL);
}

/* EVP_PKEY_PUBLIC_KEY is an OR of other macros, which Swift does not import. It selects
 * the public half plus domain parameters when importing a key with EVP_PKEY_fromdata. */
static inline int gh_selection_public_key(void) {
    return EVP_PKEY_PUBLIC_KEY;
}

#endif
