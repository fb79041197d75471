internal import GatehouseCore

/// A JWK Set document (RFC 7517 §5), as served at an OpenID provider's `jwks_uri`.
///
/// Keys of unknown types (`OKP`, `oct`, future ones) or with members of the wrong JSON type
/// are skipped rather than failing the whole set: providers add key types over time, and
/// one odd key must not stop logins that use the others.
public struct JWKSet: Codable, Sendable, Hashable {
    /// The keys that decoded.
    public var keys: [JWK]
    /// How many entries were skipped while decoding.
    public private(set) var skippedCount = 0

    private enum CodingKeys: String, CodingKey {
        case keys
    }

    /// A set of the given keys.
    public init(keys: [JWK]) {
        self.keys = keys
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var entries = try container.nestedUnkeyedContainer(forKey: .keys)
        keys = []
        while !entries.isAtEnd {
            if let key = try? entries.decode(JWK.self) {
                keys.append(key)
            } else {
                // A failed decode does not advance the container; step over the entry.
                _ = try entries.decode(Skipped.self)
                skippedCount += 1
            }
        }
    }

    /// Decodes a JWKS document from UTF-8 JSON.
    public static func decode(_ bytes: [UInt8]) throws(JOSEError) -> JWKSet {
        do {
            return try JSONCoding.decode(JWKSet.self, from: bytes)
        } catch {
            throw .malformed("the key set is not a JSON object with a keys array")
        }
    }

    /// Decodes any JSON value and keeps nothing.
    private struct Skipped: Decodable {
        init(from decoder: any Decoder) throws {}
    }
}
