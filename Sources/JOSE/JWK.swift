internal import GatehouseCore
public import GatehouseCrypto

/// A public JSON Web Key (RFC 7517) of the kinds used for signatures: RSA and EC.
///
/// Binary members stay in their base64url text form, exactly as published; `publicKey()`
/// decodes them. Private members (`d`, `p`, …) are never read.
public struct JWK: Codable, Sendable, Hashable {
    /// The key types understood here. JWKs of any other type fail to decode, and a `JWKSet`
    /// skips them.
    public enum KeyType: String, Codable, Sendable, Hashable {
        case rsa = "RSA"
        case ec = "EC"
    }

    /// Key type.
    public var kty: KeyType
    /// Key id, matched against the token header's `kid`.
    public var kid: String?
    /// The one algorithm this key is meant for, if the publisher restricts it.
    public var alg: String?
    /// Intended use: `sig` for signatures, `enc` for encryption (never used to verify).
    public var use: String?
    /// RSA modulus, base64url.
    public var n: String?
    /// RSA public exponent, base64url.
    public var e: String?
    /// EC curve name, `P-256` or `P-384`.
    public var crv: String?
    /// EC x coordinate, base64url.
    public var x: String?
    /// EC y coordinate, base64url.
    public var y: String?

    /// A JWK from its members.
    public init(
        kty: KeyType, kid: String? = nil, alg: String? = nil, use: String? = nil, n: String? = nil, e: String? = nil,
        crv: String? = nil, x: String? = nil, y: String? = nil
    ) {
        self.kty = kty
        self.kid = kid
        self.alg = alg
        self.use = use
        self.n = n
        self.e = e
        self.crv = crv
        self.x = x
        self.y = y
    }

    /// The JWK that publishes `publicKey`, for example the gateway's own signing key.
    public init(publicKey: PublicKey, kid: String? = nil, alg: SignatureAlgorithm? = nil) throws(JOSEError) {
        let components: PublicKey.Components
        do {
            components = try publicKey.components()
        } catch {
            throw .invalidKey("the key's components cannot be read", underlying: error)
        }
        switch components {
        case .rsa(let modulus, let exponent):
            self.init(kty: .rsa, kid: kid, alg: alg?.rawValue, use: "sig", n: Base64URL.encode(modulus), e: Base64URL.encode(exponent))
        case .ec(let curve, let x, let y):
            self.init(
                kty: .ec, kid: kid, alg: alg?.rawValue, use: "sig", crv: curve.rawValue, x: Base64URL.encode(x), y: Base64URL.encode(y))
        }
    }

    /// The members RFC 7638 hashes for a thumbprint: `kty` and the key itself, without `kid`,
    /// `alg` or `use`. A DPoP proof's header carries exactly these.
    public var requiredMembers: [String: String] {
        let members: [(String, String?)] = [("kty", kty.rawValue), ("n", n), ("e", e), ("crv", crv), ("x", x), ("y", y)]
        return Dictionary(uniqueKeysWithValues: members.compactMap { name, value in value.map { (name, $0) } })
    }

    /// The algorithm named by `alg`, nil if absent. Throws for algorithms that are not
    /// signature algorithms supported here (such as `RSA-OAEP`), so such keys are never used.
    public func signatureAlgorithm() throws(JOSEError) -> SignatureAlgorithm? {
        guard let alg else { return nil }
        guard let algorithm = SignatureAlgorithm(rawValue: alg) else {
            throw .unsupportedAlgorithm("the JWK is for \(JOSEError.printable(alg)), not a supported signature algorithm")
        }
        return algorithm
    }

    /// Builds the verification key. Throws `invalidKey` when a member is missing, is not
    /// canonical base64url, or describes an unacceptable key (short RSA modulus, point off
    /// the curve, unknown curve).
    public func publicKey() throws(JOSEError) -> PublicKey {
        try built {
            switch kty {
            case .rsa:
                return try PublicKey(rsaModulus: member(n, "n"), exponent: member(e, "e"))
            case .ec:
                guard let name = crv, let curve = EllipticCurve(rawValue: name) else {
                    throw JOSEError.invalidKey("EC keys must be on P-256 or P-384")
                }
                return try PublicKey(curve: curve, x: member(x, "x"), y: member(y, "y"))
            }
        }
    }

    /// The RSA key a JWE's content key is wrapped for, from an `enc` JWK. Throws `invalidKey`
    /// for anything but a usable RSA key of 2048 bits or more.
    public func encryptionKey() throws(JOSEError) -> RSACipherKey {
        guard kty == .rsa else { throw .invalidKey("only RSA keys take wrapped content keys here") }
        return try built { try RSACipherKey(rsaModulus: member(n, "n"), exponent: member(e, "e")) }
    }

    /// What `make` builds; a failure that is not already a JOSE one becomes `invalidKey`.
    private func built<Key>(_ make: () throws -> Key) throws(JOSEError) -> Key {
        do {
            return try make()
        } catch let error as JOSEError {
            throw error
        } catch {
            throw .invalidKey("the JWK does not describe a usable key", underlying: error)
        }
    }

    private func member(_ value: String?, _ name: String) throws(JOSEError) -> [UInt8] {
        guard let value else { throw .invalidKey("the \(kty.rawValue) JWK has no \(name)") }
        guard let bytes = Base64URL.decode(value) else { throw .invalidKey("the JWK's \(name) is not canonical base64url") }
        return bytes
    }
}
