print("loyalty-server: not built yet")
