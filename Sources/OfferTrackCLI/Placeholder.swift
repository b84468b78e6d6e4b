// OfferTrackCLI
