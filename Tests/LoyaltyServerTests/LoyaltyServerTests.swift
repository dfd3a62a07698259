// Tests of LoyaltyServer.
