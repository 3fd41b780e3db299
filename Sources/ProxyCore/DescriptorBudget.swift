/// How near the file-descriptor limit the proxy may go before it turns clients away.
///
/// At the limit, accept itself fails and libuv silently closes the waiting clients (its
/// reserve-descriptor trick), and upstream connects fail too. So, like nginx's and HAProxy's
/// operators who keep descriptors in reserve, the proxy keeps `headroom` descriptors free:
/// a client accepted on a descriptor inside that margin is answered 503 and closed at once,
/// which is reported (on stderr and in the capture), and the relays already open keep the
/// descriptors they need (each pair needs two: the client and the upstream).
public enum DescriptorBudget {
    /// An eighth of the limit, from 4 to 64 descriptors.
    public static func headroom(limit: Int) -> Int { min(64, max(4, limit / 8)) }

    /// Whether a connection accepted on `descriptor` is inside the margin (nil limit: unlimited).
    public static func isNearLimit(descriptor: Int, limit: Int?) -> Bool {
        guard let limit else { return false }
        return descriptor >= limit - headroom(limit: limit)
    }
}
