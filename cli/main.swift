print("loyalty: not built yet")
