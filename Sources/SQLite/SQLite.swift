// The SQLite module; its sources arrive with their issue.
