// The LoyaltyAPI module; its sources arrive with their issue.
