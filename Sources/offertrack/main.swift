print("offertrack")
