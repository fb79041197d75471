/// Decides which metadata values never reach a log: anything whose key names a secret,
/// token, code or credential. Matching is by key fragment so that `oauth.access_token` and
/// `keyset.client_secret` are caught without listing every spelling.
public enum Redaction {
    /// What replaces a redacted value.
    public static let placeholder = "[redacted]"

    private static let sensitiveFragments = [
        "secret", "token", "password", "passwd", "authorization", "cookie", "code", "key", "verifier", "assertion",
        "signature", "nonce",
    ]

    /// Keys that contain a sensitive fragment but are known to be safe identifiers.
    private static let safeKeys: Set<String> = ["app.key", "status.code", "http.status_code", "error.code"]

    /// True if values under this metadata key must be hidden.
    public static func isSensitive(key: String) -> Bool {
        let lowered = key.lowercased()
        if safeKeys.contains(lowered) { return false }
        return sensitiveFragments.contains { lowered.contains($0) }
    }

    /// The metadata with sensitive values replaced.
    public static func apply(to metadata: Logger.Metadata) -> Logger.Metadata {
        var result = metadata
        for key in metadata.keys where isSensitive(key: key) {
            result[key] = placeholder
        }
        return result
    }
}
