#pragma once
#include <libpq-fe.h>
#include <spawn.h>

/* glibc (2.34 and later) declares this only under _GNU_SOURCE, which Swift's Glibc module is built without. The
   launcher that starts PostgreSQL (EmbeddedPostgres.launch) needs it: a daemon must take none of our descriptors. */
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
