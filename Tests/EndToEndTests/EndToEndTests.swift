// Tests of EndToEnd.
