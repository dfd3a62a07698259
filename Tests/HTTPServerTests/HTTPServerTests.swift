// Tests of HTTPServer.
