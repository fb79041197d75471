internal import COpenSSL

/// Turns key material into `EVP_PKEY` handles. Every function returns an owned handle the
/// caller must free, or throws after draining OpenSSL's error queue.
enum KeyImport {
    /// RFC 7518 §3.3 requires at least 2048 bits for RS*/PS*; the upper bound keeps a hostile
    /// key set from making each verification arbitrarily expensive.
    static let rsaBits = 2048...8192

    /// An RSA public key from its big-endian modulus and exponent (JWK `n`, `e`).
    static func rsaPublicKey(modulus: [UInt8], exponent: [UInt8]) throws(CryptoError) -> OpaquePointer {
        let n = modulus.drop { $0 == 0 }
        let e = exponent.drop { $0 == 0 }
        let bits = n.first.map { n.count * 8 - $0.leadingZeroBitCount } ?? 0
        guard rsaBits.contains(bits) else {
            throw .invalidKey("RSA modulus of \(bits) bits is outside \(rsaBits.lowerBound)...\(rsaBits.upperBound)")
        }
        // e = 1 would make every padded message its own signature.
        guard let last = e.last, last & 1 == 1, e.count <= 8, e.count > 1 || last >= 3 else {
            throw .invalidKey("RSA exponent must be odd, at least 3 and at most 64 bits")
        }
        guard let builder = OSSL_PARAM_BLD_new() else { throw .invalidKey(CryptoError.drainOpenSSLErrors()) }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard let nBN = bignum(n) else { throw .invalidKey(CryptoError.drainOpenSSLErrors()) }
        defer { BN_free(nBN) }
        guard let eBN = bignum(e) else { throw .invalidKey(CryptoError.drainOpenSSLErrors()) }
        defer { BN_free(eBN) }
        // The builder keeps the name pointers and the BIGNUMs until to_param: both outlive it.
        let nName: StaticString = "n"
        let eName: StaticString = "e"
        guard OSSL_PARAM_BLD_push_BN(builder, nName.cString, nBN) == 1,
            OSSL_PARAM_BLD_push_BN(builder, eName.cString, eBN) == 1,
            let params = OSSL_PARAM_BLD_to_param(builder)
        else { throw .invalidKey(CryptoError.drainOpenSSLErrors()) }
        defer { OSSL_PARAM_free(params) }
        return try fromData(type: "RSA", params)
    }

    /// An EC public key from its affine coordinates (JWK `x`, `y`), each exactly the curve's
    /// coordinate size as RFC 7518 §6.2.1.2 requires.
    static func ecPublicKey(curve: EllipticCurve, x: [UInt8], y: [UInt8]) throws(CryptoError) -> OpaquePointer {
        let size = curve.coordinateSize
        guard x.count == size, y.count == size else {
            throw .invalidKey("\(curve.rawValue) coordinates must be \(size) bytes each, got \(x.count) and \(y.count)")
        }
        guard let builder = OSSL_PARAM_BLD_new() else { throw .invalidKey(CryptoError.drainOpenSSLErrors()) }
        defer { OSSL_PARAM_BLD_free(builder) }
        // SEC 1 uncompressed point: 0x04 ‖ x ‖ y. OpenSSL rejects points not on the curve here.
        let point = [0x04] + x + y
        let groupName: StaticString = "group"
        let pubName: StaticString = "pub"
        let params: UnsafeMutablePointer<OSSL_PARAM>? = point.withUnsafeBufferPointer { pointBytes in
            // The builder holds `pointBytes` by reference until to_param copies it, so to_param
            // must run inside this closure.
            guard OSSL_PARAM_BLD_push_utf8_string(builder, groupName.cString, curve.groupName.cString, 0) == 1,
                OSSL_PARAM_BLD_push_octet_string(builder, pubName.cString, pointBytes.baseAddress, pointBytes.count) == 1
            else { return nil }
            return OSSL_PARAM_BLD_to_param(builder)
        }
        guard let params else { throw .invalidKey(CryptoError.drainOpenSSLErrors()) }
        defer { OSSL_PARAM_free(params) }
        return try fromData(type: "EC", params)
    }

    /// A public key from a DER SubjectPublicKeyInfo. Trailing bytes are refused.
    static func publicKey(spki der: [UInt8]) throws(CryptoError) -> OpaquePointer {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { bytes in
            guard let start = bytes.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = start
            // d2i advances `cursor` past what it consumed.
            guard let key = d2i_PUBKEY(nil, &cursor, bytes.count) else { return nil }
            guard cursor == start + bytes.count else {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key else { throw .invalidKey("not a DER SubjectPublicKeyInfo: \(CryptoError.drainOpenSSLErrors())") }
        return key
    }

    /// A public key from a PEM `PUBLIC KEY` block (SubjectPublicKeyInfo).
    static func publicKey(pem: String) throws(CryptoError) -> OpaquePointer {
        let key = withMemoryBIO(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let key else { throw .invalidKey("not a PEM public key: \(CryptoError.drainOpenSSLErrors())") }
        return key
    }

    /// A private key from PEM: PKCS#8 `PRIVATE KEY` (Apple's .p8 files) or a traditional
    /// `EC`/`RSA PRIVATE KEY` block. Encrypted keys are refused rather than prompting.
    static func privateKey(pem: String) throws(CryptoError) -> OpaquePointer {
        let key = withMemoryBIO(pem) { bio in
            // Without a callback OpenSSL would ask for a passphrase on the terminal.
            PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
        }
        guard let key else { throw .invalidKey("not an unencrypted PEM private key: \(CryptoError.drainOpenSSLErrors())") }
        return key
    }

    /// What `key` is, or nil for key types and curves this module does not handle.
    static func kind(of key: OpaquePointer) -> KeyKind? {
        if EVP_PKEY_is_a(key, "RSA") == 1 {
            return .rsa(bits: Int(EVP_PKEY_get_bits(key)))
        }
        guard EVP_PKEY_is_a(key, "EC") == 1 else { return nil }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return nil }
        let text = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return EllipticCurve(openSSLGroupName: text).map { .ec($0) }
    }

    /// `kind(of:)` for keys about to be wrapped: frees `key` and throws when it is unusable.
    static func checkedKind(of key: OpaquePointer) throws(CryptoError) -> KeyKind {
        guard let kind = kind(of: key) else {
            EVP_PKEY_free(key)
            ERR_clear_error()
            throw .invalidKey("only RSA keys and EC keys on P-256 or P-384 are supported")
        }
        if case .rsa(let bits) = kind, !rsaBits.contains(bits) {
            EVP_PKEY_free(key)
            throw .invalidKey("RSA modulus of \(bits) bits is outside \(rsaBits.lowerBound)...\(rsaBits.upperBound)")
        }
        return kind
    }

    private static func fromData(type: StaticString, _ params: UnsafeMutablePointer<OSSL_PARAM>) throws(CryptoError) -> OpaquePointer {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, type.cString, nil) else {
            throw .invalidKey(CryptoError.drainOpenSSLErrors())
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(ctx) == 1,
            EVP_PKEY_fromdata(ctx, &key, gh_selection_public_key(), params) == 1,
            let key
        else { throw .invalidKey("OpenSSL refused the \(type) key: \(CryptoError.drainOpenSSLErrors())") }
        return key
    }

    private static func bignum(_ bytes: ArraySlice<UInt8>) -> OpaquePointer? {
        bytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
    }

    /// Runs `body` with a read-only memory BIO over the UTF-8 of `text`. The BIO borrows the
    /// buffer, so both live exactly as long as the closure.
    private static func withMemoryBIO(_ text: String, _ body: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
        var text = text
        return text.withUTF8 { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }
}
