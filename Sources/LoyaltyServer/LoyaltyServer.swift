// The LoyaltyServer module; its sources arrive with their issue.
