// The Postgres module; its sources arrive with their issue.
