// The LoyaltyClient module; its sources arrive with their issue.
