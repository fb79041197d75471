internal import GatehouseCore
public import GatehouseCrypto

/// A JWS in compact serialization (`header.payload.signature`, RFC 7515 §7.1), parsed but
/// not yet verified.
public struct JWS: Sendable {
    /// The longest token accepted by default. Real id_tokens are 1–2 KiB; the cap bounds the
    /// work an anonymous caller can cause before any signature is checked.
    public static let defaultMaximumLength = 16 * 1024

    /// The typed protected header.
    public let header: JWSHeader
    /// The decoded payload bytes; for a JWT, the claims JSON.
    public let payload: [UInt8]
    /// The decoded signature (for ES256, the raw 64-byte `r ‖ s`).
    public let signature: [UInt8]
    /// The exact bytes that were signed: the first two encoded parts and the dot between them.
    public let signingInput: [UInt8]

    /// Parses `token`. Every part must be canonical unpadded base64url, the header must name an
    /// algorithm in `allowedAlgorithms`, and the token may not exceed `maximumLength` bytes.
    public init(
        compact token: String, allowedAlgorithms: some Collection<SignatureAlgorithm>, maximumLength: Int = JWS.defaultMaximumLength
    ) throws(JOSEError) {
        // One copy of the token's bytes; every part below is a slice of it.
        let bytes = try Self.bytes(of: token, maximumLength: maximumLength)
        let (first, second) = try Self.dots(in: bytes)
        header = try JWSHeader(json: Self.decode(bytes[..<first], part: "header"), allowed: allowedAlgorithms)
        payload = try Self.decode(bytes[(first + 1)..<second], part: "payload")
        signature = try Self.decode(bytes[(second + 1)...], part: "signature")
        guard !signature.isEmpty else { throw .malformed("the signature is empty") }
        signingInput = Array(bytes[..<second])
    }

    /// Whether the signature verifies under `key` with the header's algorithm.
    public func isSignatureValid(with key: PublicKey) -> Bool {
        key.verify(signature: signature, message: signingInput, algorithm: header.alg)
    }

    /// The header's `kid`, read without verifying anything, so a caller can pick the key set
    /// to load; nil if the token has none or is malformed (verification then says why).
    public static func keyID(of token: String) -> String? {
        guard let bytes = try? bytes(of: token, maximumLength: defaultMaximumLength),
            let (first, _) = try? dots(in: bytes),
            let header = try? decode(bytes[..<first], part: "header"),
            let (_, _, kid, _) = try? JWSHeader.members(of: header)
        else { return nil }
        return kid
    }

    /// A token's parts with its header's `alg` as written, for MACed tokens, which the typed
    /// header refuses. The same rules hold: canonical base64url, no `crit`, a signature.
    static func macParts(
        of token: String, maximumLength: Int
    ) throws(JOSEError) -> (alg: String, payload: [UInt8], signature: [UInt8], signingInput: [UInt8]) {
        let bytes = try bytes(of: token, maximumLength: maximumLength)
        let (first, second) = try dots(in: bytes)
        let alg = try JWSHeader.signedMembers(of: decode(bytes[..<first], part: "header")).alg
        let payload = try decode(bytes[(first + 1)..<second], part: "payload")
        let signature = try decode(bytes[(second + 1)...], part: "signature")
        guard !signature.isEmpty else { throw .malformed("the signature is empty") }
        return (alg, payload, signature, Array(bytes[..<second]))
    }

    /// The token's UTF-8, after the length check.
    private static func bytes(of token: String, maximumLength: Int) throws(JOSEError) -> [UInt8] {
        guard token.utf8.count <= maximumLength else { throw .malformed("the token is longer than \(maximumLength) bytes") }
        return Array(token.utf8)
    }

    /// The offsets of the two dots, found sixteen bytes at a time: the scan covers the whole
    /// token (a kilobyte for Apple's) on every verification.
    private static func dots(in bytes: [UInt8]) throws(JOSEError) -> (Int, Int) {
        let dot = UInt8(ascii: ".")
        let found = bytes.withUnsafeBufferPointer { buffer -> (Int, Int)? in
            guard let first = ByteScan.firstIndex(of: dot, in: buffer, from: 0),
                let second = ByteScan.firstIndex(of: dot, in: buffer, from: first + 1),
                ByteScan.firstIndex(of: dot, in: buffer, from: second + 1) == nil
            else { return nil }
            return (first, second)
        }
        guard let found else { throw .malformed("a compact JWS has exactly three parts") }
        return found
    }

    private static func decode(_ part: ArraySlice<UInt8>, part name: String) throws(JOSEError) -> [UInt8] {
        guard let bytes = Base64URL.decode(bytes: part) else {
            throw .malformed("the \(name) is not canonical unpadded base64url")
        }
        return bytes
    }
}
