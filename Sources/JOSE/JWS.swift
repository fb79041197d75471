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
        compact token: String, allowedAlgorithms: Set<SignatureAlgorithm>, maximumLength: Int = JWS.defaultMaximumLength
    ) throws(JOSEError) {
        let (first, second) = try Self.dots(in: token, maximumLength: maximumLength)
        let utf8 = token.utf8
        header = try JWSHeader(json: Self.decode(utf8[..<first], part: "header"), allowed: allowedAlgorithms)
        payload = try Self.decode(utf8[utf8.index(after: first)..<second], part: "payload")
        signature = try Self.decode(utf8[utf8.index(after: second)...], part: "signature")
        guard !signature.isEmpty else { throw .malformed("the signature is empty") }
        signingInput = Array(utf8[..<second])
    }

    /// Whether the signature verifies under `key` with the header's algorithm.
    public func isSignatureValid(with key: PublicKey) -> Bool {
        key.verify(signature: signature, message: signingInput, algorithm: header.alg)
    }

    /// The header's `kid`, read without verifying anything, so a caller can pick the key set
    /// to load; nil if the token has none or is malformed (verification then says why).
    public static func keyID(of token: String) -> String? {
        guard let (first, _) = try? dots(in: token, maximumLength: defaultMaximumLength),
            let bytes = try? decode(token.utf8[..<first], part: "header"),
            let (_, _, kid, _) = try? JWSHeader.members(of: bytes)
        else { return nil }
        return kid
    }

    /// The positions of the two dots, after the length check. Scans the contiguous UTF-8
    /// storage as a plain buffer, which is several times cheaper than stepping String indices.
    private static func dots(in token: String, maximumLength: Int) throws(JOSEError) -> (String.Index, String.Index) {
        let utf8 = token.utf8
        guard utf8.count <= maximumLength else { throw .malformed("the token is longer than \(maximumLength) bytes") }
        let offsets = utf8.withContiguousStorageIfAvailable { bytes -> (Int, Int)? in
            var first: Int?
            var second: Int?
            for offset in bytes.indices where bytes[offset] == UInt8(ascii: ".") {
                guard second == nil else { return nil }
                if first == nil { first = offset } else { second = offset }
            }
            guard let first, let second else { return nil }
            return (first, second)
        } ?? Self.dotOffsets(in: Array(utf8))
        guard let (first, second) = offsets else { throw .malformed("a compact JWS has exactly three parts") }
        return (utf8.index(utf8.startIndex, offsetBy: first), utf8.index(utf8.startIndex, offsetBy: second))
    }

    /// The slow path for the rare strings not stored as contiguous UTF-8.
    private static func dotOffsets(in bytes: [UInt8]) -> (Int, Int)? {
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        return dots.count == 2 ? (dots[0], dots[1]) : nil
    }

    private static func decode(_ part: Substring.UTF8View, part name: String) throws(JOSEError) -> [UInt8] {
        guard let bytes = Base64URL.decode(Substring(part)) else {
            throw .malformed("the \(name) is not canonical unpadded base64url")
        }
        return bytes
    }
}
