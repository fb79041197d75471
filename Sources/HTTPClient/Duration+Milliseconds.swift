extension Duration {
    /// Whole milliseconds for libcurl's `*_MS` options, rounded up and
    /// clamped to at least 1 because libcurl reads 0 as "no timeout", which
    /// would silently turn a tiny deadline into an infinite one. Capped at
    /// Int32.max (~24 days) to stay clear of overflow inside libcurl.
    var curlMilliseconds: Int {
        guard self > .zero else { return 1 }
        let (seconds, attoseconds) = components
        let cap = Int(Int32.max)
        guard seconds < Int64(cap / 1000) else { return cap }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        var millis = seconds * 1000 + attoseconds / attosecondsPerMillisecond
        if attoseconds % attosecondsPerMillisecond > 0 {
            millis += 1
        }
        return Swift.max(1, Swift.min(cap, Int(millis)))
    }
}
