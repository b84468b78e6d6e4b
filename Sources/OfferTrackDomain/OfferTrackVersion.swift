/// The version both executables report.
public enum OfferTrackVersion {
    public static let string = "0.2.0"
}
