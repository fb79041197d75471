#if canImport(Glibc)
internal import Glibc
#endif

/// Wall-clock helpers without Foundation's `Date`, which would pull Foundation into the API.
public enum Timestamp {
    /// Seconds since the Unix epoch.
    public static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }

    /// Milliseconds since the Unix epoch (vendor APIs sign and check millisecond timestamps).
    public static func nowMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec / 1_000_000)
    }

    /// UTC time with milliseconds, e.g. `2026-11-30T05:38:33.123Z`.
    public static func iso8601() -> String {
        CivilTime(milliseconds: nowMilliseconds()).iso8601Milliseconds
    }
}
