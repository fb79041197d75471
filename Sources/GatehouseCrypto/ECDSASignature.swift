internal import COpenSSL

/// Converts between JOSE's fixed-width `r ‖ s` ECDSA signatures (RFC 7518 §3.4) and the DER
/// `ECDSA-Sig-Value` that OpenSSL produces and expects.
enum ECDSASignature {
    /// Calls `body` with the DER form of `raw`, or returns nil when `raw` is not exactly two
    /// coordinates long. The DER bytes live on the stack for the duration of the call.
    static func withDER<Result>(
        raw: UnsafeRawBufferPointer, curve: EllipticCurve, _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result? {
        let size = curve.coordinateSize
        guard raw.count == 2 * size, let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = BN_bin2bn(base, Int32(size), nil) else { return nil }
        guard let s = BN_bin2bn(base + size, Int32(size), nil) else {
            BN_free(r)
            return nil
        }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        // SEQUENCE of two INTEGERs, each at most one sign byte longer than a coordinate: the
        // header bytes plus 2 × (2 + size + 1) always fit.
        let capacity = 2 * size + 12
        let length = Int(i2d_ECDSA_SIG(signature, nil))
        guard length > 0, length <= capacity else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer -> Result? in
            var cursor = buffer.baseAddress
            guard i2d_ECDSA_SIG(signature, &cursor) == length, let start = buffer.baseAddress else { return nil }
            return body(UnsafeRawBufferPointer(start: start, count: length))
        }
    }

    /// The fixed-width `r ‖ s` form of a DER signature, or nil if it does not parse or a value
    /// does not fit the curve.
    static func raw(der: UnsafeRawBufferPointer, curve: EllipticCurve) -> [UInt8]? {
        guard let start = der.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var cursor: UnsafePointer<UInt8>? = start
        guard let signature = d2i_ECDSA_SIG(nil, &cursor, der.count) else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature) else { return nil }
        let size = curve.coordinateSize
        var out = [UInt8](repeating: 0, count: 2 * size)
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            return BN_bn2binpad(r, base, Int32(size)) == size && BN_bn2binpad(s, base + size, Int32(size)) == size
        }
        return ok ? out : nil
    }
}
