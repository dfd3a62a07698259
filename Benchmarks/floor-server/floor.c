// The floor under the server bench's 304: GET /v1/catalog answered from the same statement on the same
// libraries and threads as loyalty-server (libmicrohttpd, a thread per connection; libpq, blocking), and
// nothing else: no log line, metrics, rate limits, request id or hashing (the clients file maps each token
// to its digest). What it reaches against pgbench is what any server of this design reaches on the machine.
// A reference for `make bench`, built by the Makefile; not part of the product.
//
// Usage: floor-server CONNINFO CLIENTS-FILE (lines: token TAB token-digest TAB account-id). Prints the
// port it listens on (127.0.0.1, chosen by the kernel), then serves until it is killed.
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CLIENTS 256

struct client {
    char token[128];
    char digest[80];
    char account[40];
};

static struct client clients[MAX_CLIENTS];
static int client_count;
static const char *conninfo;
// One connection to PostgreSQL per connection thread, as the server's pool gives each request one.
static __thread PGconn *database;

// Store.liveDevice(withFeedHead: true)'s statement for a token that names its account.
static const char *statement =
    "SELECT d.id, d.account_id, d.token_hash, f.generation, f.version "
    "FROM devices d JOIN catalog_feed f ON f.singleton "
    "WHERE d.token_hash = $1 AND d.revoked_at IS NULL AND d.account_id = $2";

static enum MHD_Result answer(struct MHD_Connection *connection, unsigned int status, const char *tag)
{
    struct MHD_Response *response = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (tag != NULL) MHD_add_response_header(response, "ETag", tag);
    enum MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return queued;
}

static enum MHD_Result handle(
    void *context, struct MHD_Connection *connection, const char *url, const char *method, const char *version,
    const char *upload, size_t *upload_size, void **request)
{
    (void)context; (void)url; (void)method; (void)version; (void)upload; (void)upload_size;
    // The first call has the head; the answer goes on the second, as the server's does for a request without a body.
    if (*request == NULL) {
        *request = connection;
        return MHD_YES;
    }
    const char *authorization = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Authorization");
    const struct client *client = NULL;
    for (int index = 0; authorization != NULL && index < client_count; index++) {
        if (strncmp(authorization, "Bearer ", 7) == 0 && strcmp(authorization + 7, clients[index].token) == 0) {
            client = &clients[index];
        }
    }
    if (client == NULL) return answer(connection, 401, NULL);
    if (database == NULL) database = PQconnectdb(conninfo);
    const char *parameters[2] = {client->digest, client->account};
    PGresult *result = PQexecParams(database, statement, 2, NULL, parameters, NULL, NULL, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK || PQntuples(result) != 1) {
        PQclear(result);
        return answer(connection, 500, NULL);
    }
    char tag[160];
    snprintf(tag, sizeof tag, "\"%s-%s\"", PQgetvalue(result, 0, 3), PQgetvalue(result, 0, 4));
    PQclear(result);
    const char *condition = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "If-None-Match");
    return answer(connection, condition != NULL && strcmp(condition, tag) == 0 ? 304 : 200, tag);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: floor-server CONNINFO CLIENTS-FILE\n");
        return 2;
    }
    conninfo = argv[1];
    FILE *file = fopen(argv[2], "r");
    if (file == NULL) {
        perror(argv[2]);
        return 1;
    }
    while (client_count < MAX_CLIENTS
        && fscanf(file, "%127s %79s %39s", clients[client_count].token, clients[client_count].digest,
               clients[client_count].account) == 3) {
        client_count++;
    }
    fclose(file);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC, 0, NULL, NULL,
        handle, NULL, MHD_OPTION_SOCK_ADDR, &address, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "floor-server: libmicrohttpd did not start\n");
        return 1;
    }
    printf("%u\n", (unsigned)MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT)->port);
    fflush(stdout);
    for (;;) pause();
}
