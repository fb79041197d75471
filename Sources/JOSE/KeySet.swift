public import GatehouseCrypto

/// Verification-ready keys, built once from a JWKS and shared by every verification until
/// the set is replaced.
public struct KeySet: Sendable {
    /// One usable key with the selectors a token is matched against.
    public struct Key: Sendable {
        /// The JWK `kid`, if any.
        public let kid: String?
        /// The JWK `alg` restriction, if any.
        public let algorithm: SignatureAlgorithm?
        /// The key itself.
        public let publicKey: PublicKey

        /// A key with its selectors.
        public init(kid: String?, algorithm: SignatureAlgorithm?, publicKey: PublicKey) {
            self.kid = kid
            self.algorithm = algorithm
            self.publicKey = publicKey
        }

        /// Whether a token with this `kid` (nil: the token names none) and `alg` may be
        /// checked with this key.
        public func matches(kid tokenKid: String?, algorithm tokenAlgorithm: SignatureAlgorithm) -> Bool {
            if let tokenKid, tokenKid != kid { return false }
            if let algorithm, algorithm != tokenAlgorithm { return false }
            return publicKey.supports(tokenAlgorithm)
        }
    }

    /// A key the provider publishes for content encrypted to it (`"use": "enc"`), such as the
    /// request objects some providers take only encrypted.
    public struct EncryptionKey: Sendable {
        /// The JWK `kid`, if any, which the JWE header names.
        public let kid: String?
        /// The JWK `alg` restriction (`RSA-OAEP-256`), if any.
        public let algorithm: String?
        public let key: RSACipherKey
    }

    /// The usable signature keys.
    public let keys: [Key]
    /// The usable encryption keys, which never verify anything.
    public let encryptionKeys: [EncryptionKey]
    /// How many JWKs were left out of `keys`: unknown types, encryption keys, unusable material.
    public let skippedCount: Int

    /// A set of ready keys.
    public init(_ keys: [Key]) {
        self.keys = keys
        self.encryptionKeys = []
        self.skippedCount = 0
    }

    /// Builds every signature key in `set`, and apart from them its RSA encryption keys, leaving
    /// out those that cannot be used.
    public init(_ set: JWKSet) {
        var keys: [Key] = []
        var encryptionKeys: [EncryptionKey] = []
        var skipped = set.skippedCount
        for jwk in set.keys {
            // Encryption keys are built only as such: they must never verify anything.
            guard jwk.use == nil || jwk.use == "sig" else {
                if jwk.use == "enc", let key = try? jwk.encryptionKey() {
                    encryptionKeys.append(EncryptionKey(kid: jwk.kid, algorithm: jwk.alg, key: key))
                }
                skipped += 1
                continue
            }
            let algorithm: SignatureAlgorithm?
            let publicKey: PublicKey
            do {
                algorithm = try jwk.signatureAlgorithm()
                publicKey = try jwk.publicKey()
            } catch {
                skipped += 1
                continue
            }
            guard algorithm.map(publicKey.supports) ?? true else {
                skipped += 1
                continue
            }
            keys.append(Key(kid: jwk.kid, algorithm: algorithm, publicKey: publicKey))
        }
        self.keys = keys
        self.encryptionKeys = encryptionKeys
        self.skippedCount = skipped
    }

    /// Whether some key carries `kid`.
    public func contains(kid: String) -> Bool {
        keys.contains { $0.kid == kid }
    }
}
