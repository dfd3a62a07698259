#pragma once
#include <curl/curl.h>

// Swift cannot call the variadic curl_easy_setopt / curl_easy_getinfo: one fixed-arity wrapper per
// argument type HTTPClient passes.

static inline CURLcode loyalty_curl_easy_setopt_long(CURL *handle, CURLoption option, long value)
{
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode loyalty_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value)
{
    return curl_easy_setopt(handle, option, value);
}

/// For options taking a string, a buffer or a context pointer (CURLOPT_URL, CURLOPT_POSTFIELDS,
/// CURLOPT_WRITEDATA, CURLOPT_ERRORBUFFER...).
static inline CURLcode loyalty_curl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value)
{
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode loyalty_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value)
{
    return curl_easy_setopt(handle, option, value);
}

/// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
static inline CURLcode loyalty_curl_easy_setopt_write_callback(
    CURL *handle, CURLoption option, size_t (*callback)(char *data, size_t size, size_t count, void *context))
{
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode loyalty_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value)
{
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode loyalty_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value)
{
    return curl_easy_getinfo(handle, info, value);
}
