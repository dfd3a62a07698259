// Tests of Postgres.
