// Tests of HTTPClient.
