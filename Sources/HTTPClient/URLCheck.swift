internal import CCurl
internal import Synchronization

/// Validates request URLs with libcurl's own parser (curl_url), so the
/// check and the eventual transfer agree on what the URL means.
enum URLCheck {
    /// Short URLs that passed. A provider's token endpoint is the same URL on every login,
    /// and libcurl's parser costs more than the rest of setting up the transfer; the verdict
    /// depends on the string alone. Long URLs (API calls with their queries) are not kept,
    /// and the set is emptied when full, so it stays a few tens of kilobytes.
    private static let passed = Mutex(Set<String>())
    private static let rememberedLength = 256
    private static let rememberedCount = 256

    /// Throws `.invalidURL` unless the URL parses, has a host and uses http
    /// or https. Rejecting other schemes here, rather than only through
    /// CURLOPT_PROTOCOLS_STR, gives a clear error before any I/O.
    static func validate(_ url: String) throws(HTTPClientError) {
        let rememberable = url.utf8.count <= rememberedLength
        if rememberable, passed.withLock({ $0.contains(url) }) { return }
        try parse(url)
        guard rememberable else { return }
        passed.withLock { urls in
            if urls.count >= rememberedCount { urls.removeAll(keepingCapacity: true) }
            urls.insert(url)
        }
    }

    private static func parse(_ url: String) throws(HTTPClientError) {
        // A NUL would silently truncate the C string libcurl sees.
        guard !url.utf8.contains(0) else { throw .invalidURL("URL contains NUL") }
        guard let parsed = curl_url() else { throw .transport("curl_url failed") }
        defer { curl_url_cleanup(parsed) }

        // Flags 0: no scheme guessing, no default scheme, no spaces.
        let rc = curl_url_set(parsed, CURLUPART_URL, url, 0)
        guard rc == CURLUE_OK else {
            throw .invalidURL("\(String(cString: curl_url_strerror(rc))): \(url)")
        }
        let scheme = part(CURLUPART_SCHEME, of: parsed)?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw .invalidURL("scheme \(scheme ?? "none") not allowed: \(url)")
        }
        guard let host = part(CURLUPART_HOST, of: parsed), !host.isEmpty else {
            throw .invalidURL("missing host: \(url)")
        }
    }

    private static func part(_ which: CURLUPart, of parsed: OpaquePointer) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(parsed, which, &value, 0) == CURLUE_OK, let value else { return nil }
        defer { curl_free(value) }
        return String(cString: value)
    }
}
