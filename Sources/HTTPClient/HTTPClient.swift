// The HTTPClient module; its sources arrive with their issue.
