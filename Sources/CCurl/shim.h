#ifndef GATEHOUSE_CCURL_SHIM_H
#define GATEHOUSE_CCURL_SHIM_H

#include <curl/curl.h>

/*
 * Swift cannot call C variadic functions, and curl_easy_setopt,
 * curl_multi_setopt and curl_easy_getinfo are all declared with `...`.
 * Each shim below pins ONE argument type so the call is a plain
 * non-variadic C function Swift can import. Everything else in libcurl
 * (curl_multi_poll, curl_multi_info_read, curl_url_*, ...) is imported
 * directly and needs no shim.
 */

/* CURLOPTTYPE_LONG options (timeouts, booleans, limits): the vararg must be
   a C `long`, not an int, or curl reads garbage on LP64. */
static inline CURLcode shim_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/* CURLOPTTYPE_OFF_T options (POSTFIELDSIZE_LARGE, MAXFILESIZE_LARGE): curl
   reads a curl_off_t, whose width may differ from long on other platforms. */
static inline CURLcode shim_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/* CURLOPTTYPE_STRINGPOINT options (URL, CUSTOMREQUEST, CAINFO, ...): libcurl
   copies these strings during the call, so Swift's temporary C strings are
   safe to pass. */
static inline CURLcode shim_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/* CURLOPTTYPE_OBJECTPOINT / CBPOINT options: opaque context pointers handed
   back to us later (PRIVATE, WRITEDATA, HEADERDATA), the ERRORBUFFER target,
   and binary COPYPOSTFIELDS data (void* and char* share a representation,
   which C guarantees for va_arg). */
static inline CURLcode shim_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/* CURLOPTTYPE_SLISTPOINT options (HTTPHEADER): typed so Swift passes the
   list pointer without casting it through void*. */
static inline CURLcode shim_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/* CURLOPTTYPE_FUNCTIONPOINT options WRITEFUNCTION and HEADERFUNCTION share
   the curl_write_callback signature; a typed parameter lets Swift pass a
   @convention(c) closure. */
static inline CURLcode shim_easy_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

/* CURLOPT_PREREQFUNCTION (libcurl 7.80): called each time libcurl is about to send the
   request, its own silent replay on a fresh connection included, which is how a POST or
   PATCH refuses that replay (see EasyHandle+Configure.swift). */
static inline CURLcode shim_easy_setopt_prereq_callback(CURL *handle, curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

/* CURLMOPT_* limits (MAX_HOST_CONNECTIONS, MAXCONNECTS, ...) take a long;
   curl_multi_setopt is variadic too. */
static inline CURLMcode shim_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/* CURLINFO_LONG values (RESPONSE_CODE, NUM_CONNECTS): curl writes a long. */
static inline CURLcode shim_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/* CURLINFO_PRIVATE: curl writes back the pointer stored with CURLOPT_PRIVATE
   through a `char **`; this returns it as void* so Swift can rebuild the
   Unmanaged reference without a char-pointer detour. */
static inline CURLcode shim_easy_getinfo_private(CURL *handle, void **value) {
    char *stored = NULL;
    CURLcode rc = curl_easy_getinfo(handle, CURLINFO_PRIVATE, &stored);
    *value = stored;
    return rc;
}

#endif
