// The HTTPServer module; its sources arrive with their issue.
