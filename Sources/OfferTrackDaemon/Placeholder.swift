// OfferTrackDaemon
