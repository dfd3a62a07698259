// Tests of SQLite.
