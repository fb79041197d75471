/// The classes a failed token → phone exchange falls into (carrier.md §11.4). Each becomes
/// its own `error` code in Gatehouse's JSON answer, so an app can tell a stale device token
/// from a misconfigured keyset from a vendor outage.
public enum CarrierErrorClass: String, Sendable, Hashable, CaseIterable {
    /// The device token expired (carrier tokens live 2 to 30 minutes) or is unknown.
    case tokenExpired = "token_expired"
    /// The device token was already exchanged once; tokens are single use.
    case tokenUsed = "token_used"
    /// The vendor rejected the request signature: wrong secret in the keyset, or clock skew.
    case badSignature = "bad_signature"
    /// The vendor rejected the app's credentials (unknown app id, wrong master secret).
    case authFailed = "auth_failed"
    /// The gateway's egress IP is not on the vendor's whitelist.
    case ipNotAllowed = "ip_not_allowed"
    /// The vendor account has no balance left.
    case insufficientBalance = "insufficient_balance"
    /// The vendor throttled the app.
    case rateLimited = "rate_limited"
    /// The vendor found the request's fields invalid (for example a malformed device token).
    case badRequest = "bad_request"
    /// The carrier behind the vendor could not resolve the number.
    case carrierFailed = "carrier_failed"
    /// Any other vendor failure, or an answer the definition cannot read.
    case upstream
    /// The vendor could not be reached or did not answer in time.
    case transport
    /// The phone number (or the envelope around it) did not decrypt with the keyset's key.
    case decryptFailed = "decrypt_failed"
    /// The decrypted value is not a mainland mobile number.
    case invalidPhone = "invalid_phone"
    /// The caller left out a required input or sent one that cannot be used.
    case invalidInput = "invalid_input"
    /// The app's keyset lacks a secret the definition needs, or a secret is unusable.
    case misconfigured

    /// The HTTP status Gatehouse answers with: 4xx for what the caller can fix (the device
    /// token, the inputs, the keyset), 502/504 for the vendor's side.
    public var httpStatus: Int {
        switch self {
        case .tokenExpired, .tokenUsed: 401
        case .invalidInput, .badRequest, .misconfigured: 400
        case .rateLimited: 429
        case .transport: 504
        default: 502
        }
    }
}

/// A failed exchange: its class, a reason safe to show the caller (never a secret, token or
/// phone number), and the vendor's own code and message for the log.
public struct CarrierError: Error, Sendable, Equatable, CustomStringConvertible {
    public let errorClass: CarrierErrorClass
    public let reason: String
    /// The vendor's error code, when its answer had one.
    public let vendorCode: String?
    /// The vendor's error message, when its answer had one.
    public let vendorMessage: String?

    public init(_ errorClass: CarrierErrorClass, _ reason: String, vendorCode: String? = nil, vendorMessage: String? = nil) {
        self.errorClass = errorClass
        self.reason = reason
        self.vendorCode = vendorCode
        self.vendorMessage = vendorMessage
    }

    public var description: String { "\(errorClass.rawValue): \(reason)" }
}
