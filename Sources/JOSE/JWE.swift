public import GatehouseCore
public import GatehouseCrypto

/// A JWE in compact serialization (RFC 7516 §7.1), as providers send encrypted id_tokens and
/// UserInfo answers (itsme, Finnish Trust Network brokers): the content key wrapped with
/// RSA-OAEP to the app's public key, the content under AES-CBC with HMAC or AES-GCM.
public enum JWE {
    /// How the content key is wrapped (RFC 7518 §4.3). RSA1_5 is refused: its padding oracle
    /// is why OAEP exists.
    public enum KeyAlgorithm: String, Sendable, CaseIterable {
        case rsaOAEP = "RSA-OAEP"
        case rsaOAEP256 = "RSA-OAEP-256"
    }

    /// How the content is encrypted (RFC 7518 §5).
    public enum ContentAlgorithm: String, Sendable, CaseIterable {
        case a128CBCHS256 = "A128CBC-HS256"
        case a192CBCHS384 = "A192CBC-HS384"
        case a256CBCHS512 = "A256CBC-HS512"
        case a128GCM = "A128GCM"
        case a192GCM = "A192GCM"
        case a256GCM = "A256GCM"

        var isGCM: Bool {
            switch self {
            case .a128GCM, .a192GCM, .a256GCM: true
            default: false
            }
        }

        /// The content key's length in bytes: both halves for the CBC-HMAC pairs.
        var keyLength: Int {
            switch self {
            case .a128CBCHS256: 32
            case .a192CBCHS384: 48
            case .a256CBCHS512: 64
            case .a128GCM: 16
            case .a192GCM: 24
            case .a256GCM: 32
            }
        }
    }

    /// Encrypted tokens are a nested signed token plus a wrapped key and overhead.
    public static let maximumLength = 64 * 1024

    /// True when `token` has the five parts of a compact JWE rather than the three of a JWS.
    public static func isEncrypted(_ token: String) -> Bool {
        token.utf8.reduce(0) { $1 == UInt8(ascii: ".") ? $0 + 1 : $0 } == 4
    }

    /// The plaintext of `token`, encrypted to `key`'s public half, and its protected header.
    /// Every failure after the header is one error: which step failed must not be told apart
    /// (RFC 7516 §11.5).
    public static func decrypt(_ token: String, key: RSACipherKey) throws(JOSEError) -> (header: JSONValue, plaintext: [UInt8]) {
        guard token.utf8.count <= maximumLength else { throw .malformed("the token is longer than \(maximumLength) bytes") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 5 else { throw .malformed("a compact JWE has exactly five parts") }
        var decoded: [[UInt8]] = []
        for (part, name) in zip(parts, ["header", "encrypted key", "IV", "ciphertext", "tag"]) {
            guard let bytes = Base64URL.decode(bytes: ArraySlice(part.utf8)) else {
                throw .malformed("the \(name) is not canonical unpadded base64url")
            }
            decoded.append(bytes)
        }
        let (header, alg, enc) = try Self.header(decoded[0])
        guard key.isPrivate, key.bits >= 2048 else { throw .invalidKey("RSA-OAEP needs a private key of 2048 bits or more") }
        // A key that does not unwrap leaves a random one in its place, so the failure surfaces
        // at the tag check like any other.
        var contentKey = (try? key.decrypt(decoded[1], padding: alg == .rsaOAEP256 ? .oaepSHA256 : .oaepSHA1)) ?? []
        if contentKey.count != enc.keyLength { contentKey = (try? SecureRandom.bytes(enc.keyLength)) ?? [UInt8](repeating: 0, count: enc.keyLength) }
        let aad = Array(parts[0].utf8)
        guard let plaintext = Self.openContent(decoded[3], enc: enc, key: contentKey, iv: decoded[2], aad: aad, tag: decoded[4]) else {
            throw .undecryptable("the token does not decrypt with the app's key")
        }
        return (header, plaintext)
    }

    /// `plaintext` encrypted to `key` (a provider's published RSA key) as a compact JWE whose
    /// header names `keyID` and, for a nested token, `contentType` (`JWT`).
    public static func encrypt(
        _ plaintext: [UInt8], to key: RSACipherKey, keyID: String?, alg: KeyAlgorithm, enc: ContentAlgorithm, contentType: String? = nil
    ) throws(JOSEError) -> String {
        guard key.bits >= 2048 else { throw .invalidKey("RSA-OAEP needs a key of 2048 bits or more") }
        var header: JSONObject = ["alg": .string(alg.rawValue), "enc": .string(enc.rawValue)]
        if let keyID { header["kid"] = .string(keyID) }
        if let contentType { header["cty"] = .string(contentType) }
        let protected = Base64URL.encode(JSONValue.object(header).serialized())
        let aad = Array(protected.utf8)
        let sealed: (wrapped: [UInt8], iv: [UInt8], ciphertext: [UInt8], tag: [UInt8])
        do {
            let contentKey = try SecureRandom.bytes(enc.keyLength)
            let iv = try SecureRandom.bytes(enc.isGCM ? 12 : 16)
            let wrapped = try key.encrypt(contentKey, padding: alg == .rsaOAEP256 ? .oaepSHA256 : .oaepSHA1)
            if enc.isGCM {
                let (ciphertext, tag) = try AESGCM.seal(plaintext, key: contentKey, nonce: iv, aad: aad)
                sealed = (wrapped, iv, ciphertext, tag)
            } else {
                let half = contentKey.count / 2
                let ciphertext = try BlockCipher.encrypt(plaintext, algorithm: .aes, mode: .cbc, key: Array(contentKey[half...]), iv: iv)
                sealed = (wrapped, iv, ciphertext, cbcTag(enc, macKey: Array(contentKey[..<half]), aad: aad, iv: iv, ciphertext: ciphertext))
            }
        } catch {
            throw .invalidKey("the content could not be encrypted to the provider's key", underlying: error)
        }
        return [protected, Base64URL.encode(sealed.wrapped), Base64URL.encode(sealed.iv), Base64URL.encode(sealed.ciphertext),
            Base64URL.encode(sealed.tag)].joined(separator: ".")
    }

    /// The protected header, with its `alg` and `enc` among those supported; `zip` is refused
    /// (a small token must not inflate into a large one), as is `crit`.
    private static func header(_ bytes: [UInt8]) throws(JOSEError) -> (JSONValue, KeyAlgorithm, ContentAlgorithm) {
        guard let header = JSONValue.parse(bytes), header.objectValue != nil else { throw .malformed("the header is not a JSON object") }
        guard let name = header["alg"]?.stringValue, let alg = KeyAlgorithm(rawValue: name) else {
            let shown = header["alg"]?.stringValue.map(JOSEError.printable) ?? "missing"
            throw .unsupportedAlgorithm("key management alg \(shown) is not supported (RSA-OAEP, RSA-OAEP-256)")
        }
        guard let encName = header["enc"]?.stringValue, let enc = ContentAlgorithm(rawValue: encName) else {
            throw .unsupportedAlgorithm("content encryption \(header["enc"]?.stringValue.map(JOSEError.printable) ?? "missing") is not supported")
        }
        guard header["zip"] == nil else { throw .unsupportedAlgorithm("compressed content (zip) is not accepted") }
        guard header["crit"] == nil else { throw .malformed("the header has critical extensions (crit), none of which are supported") }
        return (header, alg, enc)
    }

    /// The content, if `tag` authenticates it and `aad` under the content key (RFC 7518 §5;
    /// §5.2.2.2 for the CBC-HMAC pairs).
    public static func openContent(_ ciphertext: [UInt8], enc: ContentAlgorithm, key: [UInt8], iv: [UInt8], aad: [UInt8], tag: [UInt8]) -> [UInt8]? {
        switch enc {
        case .a128GCM, .a192GCM, .a256GCM:
            guard iv.count == 12 else { return nil }
            return try? AESGCM.open(ciphertext, key: key, nonce: iv, aad: aad, tag: tag)
        case .a128CBCHS256, .a192CBCHS384, .a256CBCHS512:
            let half = key.count / 2
            let expected = cbcTag(enc, macKey: Array(key[..<half]), aad: aad, iv: iv, ciphertext: ciphertext)
            guard iv.count == 16, ConstantTime.equals(expected, tag) else { return nil }
            return try? BlockCipher.decrypt(ciphertext, algorithm: .aes, mode: .cbc, key: Array(key[half...]), iv: iv)
        }
    }

    /// RFC 7518 §5.2.2.1: the HMAC of the AAD, IV, ciphertext and the AAD's length in bits,
    /// cut to the MAC key's length.
    private static func cbcTag(_ enc: ContentAlgorithm, macKey: [UInt8], aad: [UInt8], iv: [UInt8], ciphertext: [UInt8]) -> [UInt8] {
        let bits = UInt64(aad.count) * 8
        let lengthBlock = (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64($0))) }
        let message = aad + iv + ciphertext + lengthBlock
        let mac = switch enc {
        case .a192CBCHS384: MACAlgorithm.hs384.code(key: macKey, message: message)
        case .a256CBCHS512: MACAlgorithm.hs512.code(key: macKey, message: message)
        default: MACAlgorithm.hs256.code(key: macKey, message: message)
        }
        return Array(mac[..<macKey.count])
    }
}
