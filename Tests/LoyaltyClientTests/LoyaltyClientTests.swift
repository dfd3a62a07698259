// Tests of LoyaltyClient.
