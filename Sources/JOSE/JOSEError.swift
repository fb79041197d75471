/// Why a token or key set was refused.
///
/// `reason` is safe to log and to show: it never contains the token, and values taken from
/// the token (such as a `kid`) appear only after `printable(_:)` has bounded and filtered them.
public struct JOSEError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case malformed
        case unsupportedAlgorithm
        case unknownKey
        case invalidKey
        case badSignature
        case undecryptable
        case claimMismatch
        case expired
        case notYetValid
        case keySetUnavailable
    }

    private let code: Code
    /// Details for the operator's log.
    public let reason: String
    /// The claim that failed, for `claimMismatch`.
    public let claim: String?
    /// The error from a lower layer (the JWKS fetcher, the crypto module), if any.
    public let underlying: (any Error)?

    private init(_ code: Code, _ reason: String, claim: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.reason = reason
        self.claim = claim
        self.underlying = underlying
    }

    /// The token or key set is not well-formed: wrong shape, bad base64url, bad JSON, wrong types.
    public static func malformed(_ reason: String) -> JOSEError { JOSEError(.malformed, reason) }
    /// The header names an algorithm that is not allowed here (including `none` and HMAC).
    public static func unsupportedAlgorithm(_ reason: String) -> JOSEError { JOSEError(.unsupportedAlgorithm, reason) }
    /// No key in the set matches the token's `kid` and algorithm.
    public static func unknownKey(_ reason: String) -> JOSEError { JOSEError(.unknownKey, reason) }
    /// A JWK could not be turned into a usable public key.
    public static func invalidKey(_ reason: String, underlying: (any Error)? = nil) -> JOSEError {
        JOSEError(.invalidKey, reason, underlying: underlying)
    }
    /// The signature does not verify under any candidate key.
    public static func badSignature(_ reason: String) -> JOSEError { JOSEError(.badSignature, reason) }
    /// An encrypted token does not decrypt under the key it was meant for.
    public static func undecryptable(_ reason: String) -> JOSEError { JOSEError(.undecryptable, reason) }
    /// A claim is missing or differs from what was expected; `claim` names it.
    public static func claimMismatch(_ claim: String, _ reason: String) -> JOSEError {
        JOSEError(.claimMismatch, reason, claim: claim)
    }
    /// `exp` has passed, leeway included.
    public static func expired(_ reason: String) -> JOSEError { JOSEError(.expired, reason) }
    /// `nbf` or `iat` lies in the future, leeway included.
    public static func notYetValid(_ reason: String) -> JOSEError { JOSEError(.notYetValid, reason) }
    /// The provider's key set could not be fetched or held no usable key.
    public static func keySetUnavailable(_ reason: String, underlying: (any Error)? = nil) -> JOSEError {
        JOSEError(.keySetUnavailable, reason, underlying: underlying)
    }

    /// A label without details, safe for metrics.
    public var shortDescription: String { code.rawValue }
    public var description: String {
        "jose \(code.rawValue)\(claim.map { "(\($0))" } ?? ""): \(reason)"
    }

    /// Errors compare by kind and, for claim mismatches, by claim name; reasons vary.
    public static func == (lhs: JOSEError, rhs: JOSEError) -> Bool {
        lhs.code == rhs.code && lhs.claim == rhs.claim
    }

    /// A token-supplied string made fit for a reason: at most 64 characters, anything outside
    /// `A-Z a-z 0-9 . _ -` replaced by `?`, so it can neither inject log lines nor carry much.
    static func printable(_ text: String) -> String {
        var out = ""
        for byte in text.utf8.prefix(64) {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "?"
            }
        }
        return text.utf8.count > 64 ? out + "…" : out
    }
}
