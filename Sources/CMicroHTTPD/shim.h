#pragma once
#include <sys/types.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <microhttpd.h>

// Swift cannot call C variadic functions: fixed-arity wrappers for the calls HTTPServer makes.

/// Percent-decodes the path and query like MHD's default, except that text holding "%00" is left
/// encoded: decoded, the NUL would end the C string MHD hands over, and the handler would act on
/// a shorter path or value than the client sent ("/stores/a%00b" would address store "a").
static inline size_t loyalty_MHD_unescape(void *context, struct MHD_Connection *connection, char *text)
{
    (void)context;
    (void)connection;
    if (strstr(text, "%00") != NULL) return strlen(text);
    return MHD_http_unescape(text);
}

/// Starts a daemon bound to `address` with the options HTTPServer sets. NULL on failure
/// (the reason goes to `logger`).
static inline struct MHD_Daemon *loyalty_MHD_start_daemon(
    unsigned int flags, const struct sockaddr *address,
    MHD_AccessHandlerCallback handler, void *handler_context,
    MHD_RequestCompletedCallback completed, void *completed_context,
    MHD_LogCallback logger, void *logger_context,
    unsigned int thread_pool_size, unsigned int connection_limit,
    size_t memory_limit_per_connection, unsigned int connection_timeout_seconds)
{
    return MHD_start_daemon(
        flags, 0, NULL, NULL, handler, handler_context,
        MHD_OPTION_EXTERNAL_LOGGER, logger, logger_context,  // first, so startup errors reach it
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_UNESCAPE_CALLBACK, loyalty_MHD_unescape, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit_per_connection,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_END);
}

/// The port the daemon listens on (the real one when it was started on port 0); 0 if unknown.
static inline uint16_t loyalty_MHD_bound_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// The peer's address, or NULL.
static inline const struct sockaddr *loyalty_MHD_client_address(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}
