// The floor under the server bench's 304: GET /v1/catalog answered from the same statement on the same
// libraries as loyalty-server (libmicrohttpd, libpq), and nothing else: no log line, metrics, rate limits,
// request id or hashing (the clients file maps each token to its digest). Two designs:
// - threads (the default), loyalty-server's: a thread per connection, each blocking on its own libpq
//   connection. What it reaches against pgbench is what any server of this design reaches on the machine.
// - loops: an event loop per core, each with its own libmicrohttpd daemon on the shared port (SO_REUSEPORT)
//   and its own non-blocking libpq connections in one epoll set. A request is suspended while its statement
//   runs, so no thread waits on PostgreSQL: what a server rewritten that way could reach.
// - pipelined: the loops, each with one libpq connection in pipeline mode: the statements of the requests that
//   arrive in one turn of a loop go to PostgreSQL together, behind one Sync, and their answers come back together.
//   One wake-up of a backend runs several statements, where pgbench's clients send one at a time: the most a
//   server on these libraries could reach here, whatever else it did.
// A reference for `make bench`, built by the Makefile; not part of the product.
//
// Usage: floor-server [--loops | --pipelined] CONNINFO CLIENTS-FILE (lines: token TAB token-digest TAB account-id). Prints
// the port it listens on (127.0.0.1, chosen by the kernel), then serves until it is killed.
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define MAX_CLIENTS 256
#define MAX_LOOPS 16
// The loops' libpq connections together, as many as loyalty-server's pool has on two cores.
#define DATABASE_CONNECTIONS 16

struct client {
    char token[128];
    char digest[80];
    char account[40];
};

static struct client clients[MAX_CLIENTS];
static int client_count;
static const char *conninfo;

// Store.liveDevice(withFeedHead: true)'s statement for a token that names its account.
static const char *statement =
    "SELECT d.id, d.account_id, d.token_hash, f.generation, f.version "
    "FROM devices d JOIN catalog_feed f ON f.singleton "
    "WHERE d.token_hash = $1 AND d.revoked_at IS NULL AND d.account_id = $2";

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "floor-server: %s%s\n", what, detail);
    exit(1);
}

static const struct client *client_of(struct MHD_Connection *connection)
{
    const char *authorization = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Authorization");
    if (authorization == NULL || strncmp(authorization, "Bearer ", 7) != 0) return NULL;
    for (int index = 0; index < client_count; index++) {
        if (strcmp(authorization + 7, clients[index].token) == 0) return &clients[index];
    }
    return NULL;
}

// The ETag from the statement's row, as the server writes it; false when the statement found no row.
static int tag_of(PGresult *result, char *tag, size_t size)
{
    if (PQresultStatus(result) != PGRES_TUPLES_OK || PQntuples(result) != 1) return 0;
    snprintf(tag, size, "\"%s-%s\"", PQgetvalue(result, 0, 3), PQgetvalue(result, 0, 4));
    return 1;
}

// 304 when the request's If-None-Match is `tag`, 200 otherwise; 401 and 500 without a tag.
static enum MHD_Result answer(struct MHD_Connection *connection, unsigned int status, const char *tag)
{
    if (status == 200) {
        const char *condition = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "If-None-Match");
        if (condition != NULL && strcmp(condition, tag) == 0) status = 304;
    }
    struct MHD_Response *response = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (tag != NULL) MHD_add_response_header(response, "ETag", tag);
    enum MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return queued;
}

// MARK: threads

// One connection to PostgreSQL per connection thread, as the server's pool gives each request one.
static __thread PGconn *database;

static enum MHD_Result handle_blocking(
    void *context, struct MHD_Connection *connection, const char *url, const char *method, const char *version,
    const char *upload, size_t *upload_size, void **request)
{
    (void)context; (void)url; (void)method; (void)version; (void)upload; (void)upload_size;
    // The first call has the head; the answer goes on the second, as the server's does for a request without a body.
    if (*request == NULL) {
        *request = connection;
        return MHD_YES;
    }
    const struct client *client = client_of(connection);
    if (client == NULL) return answer(connection, 401, NULL);
    if (database == NULL) database = PQconnectdb(conninfo);
    const char *parameters[2] = {client->digest, client->account};
    PGresult *result = PQexecParams(database, statement, 2, NULL, parameters, NULL, NULL, 0);
    char tag[160];
    int found = tag_of(result, tag, sizeof tag);
    PQclear(result);
    return found ? answer(connection, 200, tag) : answer(connection, 500, NULL);
}

static unsigned short serve_with_threads(void)
{
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC, 0, NULL, NULL,
        handle_blocking, NULL, MHD_OPTION_SOCK_ADDR, &address, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)32 * 1024, MHD_OPTION_END);
    if (daemon == NULL) fail("libmicrohttpd did not start", "");
    return MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT)->port;
}

// MARK: loops

// A request between the access handler's calls: waiting for a libpq connection, then for its statement.
struct request {
    struct MHD_Connection *connection;
    const struct client *client;
    int answered;  // the statement's row is in: `status` and `tag` say what to send
    unsigned int status;
    char tag[160];
    struct request *next_waiting;
};

struct loop;

// A libpq connection of a loop, and the request whose statement it runs (NULL when free).
struct statement_runner {
    PGconn *connection;
    struct request *request;
    struct loop *loop;
};

struct loop {
    struct MHD_Daemon *daemon;
    int epoll;
    struct statement_runner runners[DATABASE_CONNECTIONS];
    int runner_count;
    struct statement_runner *free_runners[DATABASE_CONNECTIONS];
    int free_count;
    struct request *first_waiting, *last_waiting;
    // Pipelined: the one runner's statements sent and not yet answered, oldest first (their answers come in that
    // order), and how many went since the last Sync.
    int pipelined;
    struct request *first_sent, *last_sent;
    int unsynced;
};

static void run_statement(struct statement_runner *runner, struct request *request)
{
    runner->request = request;
    const char *parameters[2] = {request->client->digest, request->client->account};
    if (!PQsendQueryParams(runner->connection, statement, 2, NULL, parameters, NULL, NULL, 0)) {
        fail("could not send the statement: ", PQerrorMessage(runner->connection));
    }
    // A few hundred bytes: the socket's buffer takes them at once, or after a moment.
    while (PQflush(runner->connection) == 1) {}
}

// Appends the request's statement to the pipeline; the loop sends the Sync once its turn's requests are in.
static void send_pipelined(struct loop *loop, struct request *request)
{
    PGconn *connection = loop->runners[0].connection;
    const char *parameters[2] = {request->client->digest, request->client->account};
    if (!PQsendQueryParams(connection, statement, 2, NULL, parameters, NULL, NULL, 0)) {
        fail("could not send the statement: ", PQerrorMessage(connection));
    }
    request->next_waiting = NULL;
    if (loop->last_sent != NULL) loop->last_sent->next_waiting = request;
    else loop->first_sent = request;
    loop->last_sent = request;
    loop->unsynced++;
}

static enum MHD_Result handle_suspending(
    void *context, struct MHD_Connection *connection, const char *url, const char *method, const char *version,
    const char *upload, size_t *upload_size, void **slot)
{
    (void)url; (void)method; (void)version; (void)upload; (void)upload_size;
    struct loop *loop = context;
    struct request *request = *slot;
    if (request == NULL) {
        request = calloc(1, sizeof *request);
        if (request == NULL) return MHD_NO;
        request->connection = connection;
        *slot = request;
        return MHD_YES;
    }
    // Called again once resumed, with the statement's answer.
    if (request->answered) return answer(connection, request->status, request->status == 200 ? request->tag : NULL);
    request->client = client_of(connection);
    if (request->client == NULL) return answer(connection, 401, NULL);
    MHD_suspend_connection(connection);
    if (loop->pipelined) {
        send_pipelined(loop, request);
    } else if (loop->free_count > 0) {
        run_statement(loop->free_runners[--loop->free_count], request);
    } else if (loop->last_waiting != NULL) {
        loop->last_waiting->next_waiting = request;
        loop->last_waiting = request;
    } else {
        loop->first_waiting = loop->last_waiting = request;
    }
    return MHD_YES;
}

static void request_completed(
    void *context, struct MHD_Connection *connection, void **slot, enum MHD_RequestTerminationCode code)
{
    (void)context; (void)connection; (void)code;
    free(*slot);
    *slot = NULL;
}

// The statement's answer has come (part of it, maybe): once whole, its request is resumed and the runner
// takes the next request waiting, if any.
static void statement_answered(struct statement_runner *runner)
{
    if (!PQconsumeInput(runner->connection)) fail("lost PostgreSQL: ", PQerrorMessage(runner->connection));
    while (runner->request != NULL && !PQisBusy(runner->connection)) {
        struct request *request = runner->request;
        PGresult *result = PQgetResult(runner->connection);
        if (result != NULL) {
            request->status = tag_of(result, request->tag, sizeof request->tag) ? 200 : 500;
            PQclear(result);
            continue;
        }
        request->answered = 1;
        MHD_resume_connection(request->connection);
        struct loop *loop = runner->loop;
        struct request *next = loop->first_waiting;
        if (next == NULL) {
            runner->request = NULL;
            loop->free_runners[loop->free_count++] = runner;
            return;
        }
        loop->first_waiting = next->next_waiting;
        if (loop->first_waiting == NULL) loop->last_waiting = NULL;
        run_statement(runner, next);
    }
}

// The pipeline's answers that have come, in the order their statements went: each statement's rows, then a NULL
// that ends it (its request is resumed); a Sync's own answer in between.
static void pipelined_statements_answered(struct loop *loop)
{
    PGconn *connection = loop->runners[0].connection;
    if (!PQconsumeInput(connection)) fail("lost PostgreSQL: ", PQerrorMessage(connection));
    while (loop->first_sent != NULL && !PQisBusy(connection)) {
        struct request *request = loop->first_sent;
        PGresult *result = PQgetResult(connection);
        if (result == NULL) {
            loop->first_sent = request->next_waiting;
            if (loop->first_sent == NULL) loop->last_sent = NULL;
            request->answered = 1;
            MHD_resume_connection(request->connection);
            continue;
        }
        if (PQresultStatus(result) != PGRES_PIPELINE_SYNC) {
            request->status = tag_of(result, request->tag, sizeof request->tag) ? 200 : 500;
        }
        PQclear(result);
    }
}

static void *run_loop(void *argument)
{
    struct loop *loop = argument;
    struct epoll_event events[64];
    for (;;) {
        int count = epoll_wait(loop->epoll, events, 64, 1000);
        for (int index = 0; index < count; index++) {
            // The daemon's own epoll set has no pointer; each libpq socket has its runner.
            if (events[index].data.ptr == NULL) continue;
            if (loop->pipelined) pipelined_statements_answered(loop);
            else statement_answered(events[index].data.ptr);
        }
        MHD_run(loop->daemon);
        if (loop->pipelined && loop->unsynced > 0) {
            PGconn *connection = loop->runners[0].connection;
            if (!PQpipelineSync(connection)) fail("no Sync: ", PQerrorMessage(connection));
            loop->unsynced = 0;
            while (PQflush(connection) == 1) {}
        }
    }
    return NULL;
}

static unsigned short serve_with_loops(int pipelined)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int loop_count = cores < 1 ? 1 : cores > MAX_LOOPS ? MAX_LOOPS : (int)cores;
    static struct loop loops[MAX_LOOPS];
    unsigned short port = 0;
    for (int index = 0; index < loop_count; index++) {
        struct loop *loop = &loops[index];
        // The first daemon takes a port from the kernel; the others share it.
        struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        loop->daemon = MHD_start_daemon(
            MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, handle_suspending, loop, MHD_OPTION_SOCK_ADDR,
            &address, MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1, MHD_OPTION_NOTIFY_COMPLETED,
            request_completed, NULL, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024, MHD_OPTION_END);
        if (loop->daemon == NULL) fail("libmicrohttpd did not start", "");
        port = MHD_get_daemon_info(loop->daemon, MHD_DAEMON_INFO_BIND_PORT)->port;
        loop->epoll = epoll_create1(0);
        struct epoll_event daemon_event = {.events = EPOLLIN, .data.ptr = NULL};
        int daemon_epoll = MHD_get_daemon_info(loop->daemon, MHD_DAEMON_INFO_EPOLL_FD)->epoll_fd;
        if (loop->epoll < 0 || epoll_ctl(loop->epoll, EPOLL_CTL_ADD, daemon_epoll, &daemon_event) != 0) {
            fail("no epoll set", "");
        }
        loop->pipelined = pipelined;
        loop->runner_count =
            pipelined ? 1 : DATABASE_CONNECTIONS / loop_count > 0 ? DATABASE_CONNECTIONS / loop_count : 1;
        for (int runner_index = 0; runner_index < loop->runner_count; runner_index++) {
            struct statement_runner *runner = &loop->runners[runner_index];
            runner->connection = PQconnectdb(conninfo);
            if (PQstatus(runner->connection) != CONNECTION_OK) fail("", PQerrorMessage(runner->connection));
            PQsetnonblocking(runner->connection, 1);
            if (pipelined && !PQenterPipelineMode(runner->connection)) fail("no pipeline mode", "");
            runner->loop = loop;
            loop->free_runners[loop->free_count++] = runner;
            struct epoll_event event = {.events = EPOLLIN, .data.ptr = runner};
            epoll_ctl(loop->epoll, EPOLL_CTL_ADD, PQsocket(runner->connection), &event);
        }
    }
    for (int index = 0; index < loop_count; index++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, run_loop, &loops[index]) != 0) fail("no thread for a loop", "");
    }
    return port;
}

int main(int argc, char **argv)
{
    const char *design = argc == 4 ? argv[1] : "";
    int loops = strcmp(design, "--loops") == 0, pipelined = strcmp(design, "--pipelined") == 0;
    if (argc != 3 + (loops || pipelined)) {
        fprintf(stderr, "usage: floor-server [--loops | --pipelined] CONNINFO CLIENTS-FILE\n");
        return 2;
    }
    conninfo = argv[argc - 2];
    FILE *file = fopen(argv[argc - 1], "r");
    if (file == NULL) {
        perror(argv[argc - 1]);
        return 1;
    }
    while (client_count < MAX_CLIENTS
        && fscanf(file, "%127s %79s %39s", clients[client_count].token, clients[client_count].digest,
               clients[client_count].account) == 3) {
        client_count++;
    }
    fclose(file);
    printf("%u\n", (unsigned)(loops || pipelined ? serve_with_loops(pipelined) : serve_with_threads()));
    fflush(stdout);
    for (;;) pause();
}
