#pragma once
#include <curl/curl.h>
#include <dlfcn.h>

// libcurl is loaded on the first request, not linked: linked, it and the TLS, Kerberos and LDAP libraries
// it needs are loaded and relocated at every start of `loyalty`, 6.6 MiB of memory, though a scan of a
// capture or a look at the cache never sends a request.

/// The entry points HTTPClient calls. The variadic two are called through the fixed-arity wrappers below.
struct loyalty_curl {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    void (*easy_reset)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
    void (*slist_free_all)(struct curl_slist *list);
    void *easy_setopt;
    void *easy_getinfo;
};

/// Loads libcurl and fills `api`; 0 on success, else -1 with `dlerror()` saying why.
static inline int loyalty_curl_load(struct loyalty_curl *api)
{
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return -1;
    void **fields[] = {
        (void **)&api->global_init, (void **)&api->easy_init, (void **)&api->easy_cleanup,
        (void **)&api->easy_reset, (void **)&api->easy_perform, (void **)&api->easy_strerror,
        (void **)&api->slist_append, (void **)&api->slist_free_all, &api->easy_setopt, &api->easy_getinfo,
    };
    const char *names[] = {
        "curl_global_init", "curl_easy_init", "curl_easy_cleanup", "curl_easy_reset", "curl_easy_perform",
        "curl_easy_strerror", "curl_slist_append", "curl_slist_free_all", "curl_easy_setopt", "curl_easy_getinfo",
    };
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        *fields[i] = dlsym(library, names[i]);
        if (*fields[i] == NULL) return -1;
    }
    return 0;
}

// Swift cannot call the variadic curl_easy_setopt / curl_easy_getinfo: one fixed-arity wrapper per
// argument type HTTPClient passes, given the entry point `loyalty_curl_load` found.
typedef CURLcode (*loyalty_curl_setopt_function)(CURL *handle, CURLoption option, ...);
typedef CURLcode (*loyalty_curl_getinfo_function)(CURL *handle, CURLINFO info, ...);

static inline CURLcode loyalty_curl_easy_setopt_long(void *setopt, CURL *handle, CURLoption option, long value)
{
    return ((loyalty_curl_setopt_function)setopt)(handle, option, value);
}

static inline CURLcode loyalty_curl_easy_setopt_off_t(
    void *setopt, CURL *handle, CURLoption option, curl_off_t value)
{
    return ((loyalty_curl_setopt_function)setopt)(handle, option, value);
}

/// For options taking a string, a buffer or a context pointer (CURLOPT_URL, CURLOPT_POSTFIELDS,
/// CURLOPT_WRITEDATA, CURLOPT_ERRORBUFFER...).
static inline CURLcode loyalty_curl_easy_setopt_pointer(
    void *setopt, CURL *handle, CURLoption option, const void *value)
{
    return ((loyalty_curl_setopt_function)setopt)(handle, option, value);
}

static inline CURLcode loyalty_curl_easy_setopt_slist(
    void *setopt, CURL *handle, CURLoption option, struct curl_slist *value)
{
    return ((loyalty_curl_setopt_function)setopt)(handle, option, value);
}

/// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
static inline CURLcode loyalty_curl_easy_setopt_write_callback(
    void *setopt, CURL *handle, CURLoption option,
    size_t (*callback)(char *data, size_t size, size_t count, void *context))
{
    return ((loyalty_curl_setopt_function)setopt)(handle, option, callback);
}

/// For CURLOPT_XFERINFOFUNCTION.
static inline CURLcode loyalty_curl_easy_setopt_xferinfo_callback(
    void *setopt, CURL *handle, CURLoption option, curl_xferinfo_callback callback)
{
    return ((loyalty_curl_setopt_function)setopt)(handle, option, callback);
}

static inline CURLcode loyalty_curl_easy_getinfo_long(void *getinfo, CURL *handle, CURLINFO info, long *value)
{
    return ((loyalty_curl_getinfo_function)getinfo)(handle, info, value);
}

static inline CURLcode loyalty_curl_easy_getinfo_off_t(
    void *getinfo, CURL *handle, CURLINFO info, curl_off_t *value)
{
    return ((loyalty_curl_getinfo_function)getinfo)(handle, info, value);
}
