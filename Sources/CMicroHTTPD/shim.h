#pragma once
#include <sys/types.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <microhttpd.h>
#include <malloc.h>  // malloc_trim, after a large answer (HTTPServer.swift)

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

/// MHD_OPTION_URI_LOG_CALLBACK's function: sees the request target before MHD parses its query; what it returns
/// becomes the request's `*con_cls`.
typedef void *(*loyalty_MHD_URILogCallback)(void *context, const char *uri, struct MHD_Connection *connection);

/// How many query parameters `target` (as the URI log callback gets it) holds, counting every '&'-separated piece
/// as MHD does. Past `limit` the query is cut off where it starts, so MHD parses none of it: each parameter takes
/// a record from the connection's memory pool, and when the pool runs out MHD 0.9.75 queues its 431 but then
/// carries on as if the request line were fine (parse_initial_message_line ignores MHD_parse_arguments_'s
/// failure and sets the state to URL_RECEIVED), with no read buffer left: the connection neither answers nor
/// reads until its idle timeout. `target` points into MHD's own writable read buffer (the callback's `const` is
/// MHD's promise, not the memory's), and MHD looks for the '?' before it calls the callback, so a NUL just after
/// it leaves MHD an empty query.
static inline size_t loyalty_MHD_count_query_parameters(const char *target, size_t limit)
{
    char *query = strchr(target, '?');
    if (query == NULL) return 0;
    size_t count = 1;
    for (const char *byte = query + 1; *byte != 0; byte++) count += *byte == '&';
    if (count > limit) query[1] = 0;
    return count;
}

/// Starts a daemon bound to `address` with the options HTTPServer sets. NULL on failure
/// (the reason goes to `logger`).
static inline struct MHD_Daemon *loyalty_MHD_start_daemon(
    unsigned int flags, const struct sockaddr *address,
    MHD_AccessHandlerCallback handler, void *handler_context,
    MHD_RequestCompletedCallback completed, void *completed_context,
    MHD_LogCallback logger, void *logger_context,
    MHD_NotifyConnectionCallback notify, void *notify_context,
    loyalty_MHD_URILogCallback target_arrived, void *target_arrived_context,
    unsigned int connection_limit, unsigned int per_ip_connection_limit,
    size_t memory_limit_per_connection, unsigned int connection_timeout_seconds)
{
    return MHD_start_daemon(
        flags, 0, NULL, NULL, handler, handler_context,
        MHD_OPTION_EXTERNAL_LOGGER, logger, logger_context,  // first, so startup errors reach it
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_UNESCAPE_CALLBACK, loyalty_MHD_unescape, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
        MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
        MHD_OPTION_URI_LOG_CALLBACK, target_arrived, target_arrived_context,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
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

/// The context the connection-notify callback gave the connection when it opened, or NULL.
static inline void *loyalty_MHD_socket_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// Where the last header's value ended while `loyalty_MHD_header_value_has_NUL` walks the headers.
struct loyalty_MHD_header_walk {
    const char *block_start;
    const char *block_end;
    const char *previous_value_end;
    int found_NUL;
};

/// Whether everything in [from, to) is a zero byte.
static inline int loyalty_all_zero(const char *from, const char *to)
{
    for (; from < to; from++) if (*from != 0) return 0;
    return 1;
}

static inline enum MHD_Result loyalty_MHD_check_header_gap(
    void *context, enum MHD_ValueKind kind, const char *key, size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    (void)key_size;
    struct loyalty_MHD_header_walk *walk = context;
    // A header not where the walk expects it (not in the block, or out of order): nothing can be told.
    if (key < walk->block_start || value == NULL || value + value_size > walk->block_end
        || (walk->previous_value_end != NULL && key < walk->previous_value_end)) {
        walk->previous_value_end = NULL;
        return MHD_YES;
    }
    if (walk->previous_value_end != NULL && !loyalty_all_zero(walk->previous_value_end, key)) walk->found_NUL = 1;
    walk->previous_value_end = value + value_size;
    return MHD_YES;
}

/// 1 when a request header's value holds a NUL byte (or a folded continuation line), which MHD 0.9.75 does not
/// say: it keeps each value as a C string cut at its first NUL (process_header_line uses strchr and strlen).
/// It leaves the lines in place in the read buffer, though: the request's head starts at `method` and spans
/// MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE bytes, with every CR and LF overwritten by a zero. So from the end
/// of one header's value to the next header's name, and from the last value to the end of the head, there
/// are only zeros unless the value went on past a NUL.
static inline int loyalty_MHD_header_value_has_NUL(struct MHD_Connection *connection, const char *method)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (info == NULL || method == NULL) return 0;
    struct loyalty_MHD_header_walk walk = { method, method + info->header_size, NULL, 0 };
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, loyalty_MHD_check_header_gap, &walk);
    if (walk.previous_value_end != NULL && !loyalty_all_zero(walk.previous_value_end, walk.block_end)) {
        walk.found_NUL = 1;
    }
    return walk.found_NUL;
}

/// The connection's socket, or -1.
static inline int loyalty_MHD_connection_socket(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}
