internal import COpenSSL

/// Why a cryptographic operation failed. Reasons carry OpenSSL's queue text for logs.
public struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case randomUnavailable
        case invalidKey
        case sealFailed
        case openFailed
        case signFailed
        case unsupportedAlgorithm
    }

    private let code: Code
    /// Details for the operator's log.
    public let reason: String

    private init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The system random generator failed; nothing secret can be made.
    public static func randomUnavailable(_ reason: String) -> CryptoError { CryptoError(.randomUnavailable, reason) }
    /// A key has the wrong length or form.
    public static func invalidKey(_ reason: String) -> CryptoError { CryptoError(.invalidKey, reason) }
    /// Encryption failed inside OpenSSL.
    public static func sealFailed(_ reason: String) -> CryptoError { CryptoError(.sealFailed, reason) }
    /// Ciphertext was truncated, tampered with, or sealed under another key or context.
    public static func openFailed(_ reason: String) -> CryptoError { CryptoError(.openFailed, reason) }
    /// Signing failed inside OpenSSL.
    public static func signFailed(_ reason: String) -> CryptoError { CryptoError(.signFailed, reason) }
    /// The key cannot be used with the requested algorithm (for example an EC key and RS256).
    public static func unsupportedAlgorithm(_ reason: String) -> CryptoError { CryptoError(.unsupportedAlgorithm, reason) }

    public var shortDescription: String { code.rawValue }
    public var description: String { "crypto \(code.rawValue): \(reason)" }
    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }

    /// Drains OpenSSL's per-thread error queue into text. Tasks hop threads, so a stale entry
    /// left behind would surface in some unrelated later failure.
    static func drainOpenSSLErrors() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no OpenSSL detail" : messages.joined(separator: "; ")
    }
}
