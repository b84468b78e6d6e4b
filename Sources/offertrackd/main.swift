print("offertrackd")
