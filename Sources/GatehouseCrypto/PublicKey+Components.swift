internal import COpenSSL

extension PublicKey {
    /// The numbers that make up a public key, in the big-endian form JWKs carry.
    public enum Components: Sendable, Hashable {
        /// RSA modulus and exponent, without leading zero bytes (JWK `n`, `e`).
        case rsa(modulus: [UInt8], exponent: [UInt8])
        /// EC point coordinates, each padded to the curve's coordinate size (JWK `x`, `y`).
        case ec(curve: EllipticCurve, x: [UInt8], y: [UInt8])
    }

    /// The key's components, for publishing it as a JWK or comparing keys.
    public func components() throws(CryptoError) -> Components {
        switch kind {
        case .rsa:
            let nName: StaticString = "n"
            let eName: StaticString = "e"
            guard let modulus = parameter(nName, width: nil), let exponent = parameter(eName, width: nil) else {
                throw .invalidKey("cannot read the RSA components: \(CryptoError.drainOpenSSLErrors())")
            }
            return .rsa(modulus: modulus, exponent: exponent)
        case .ec(let curve):
            let xName: StaticString = "qx"
            let yName: StaticString = "qy"
            guard let x = parameter(xName, width: curve.coordinateSize), let y = parameter(yName, width: curve.coordinateSize) else {
                throw .invalidKey("cannot read the EC point: \(CryptoError.drainOpenSSLErrors())")
            }
            return .ec(curve: curve, x: x, y: y)
        }
    }

    /// A big-number parameter as big-endian bytes, left-padded to `width` when given.
    private func parameter(_ name: StaticString, width: Int?) -> [UInt8]? {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name.cString, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        let natural = (Int(BN_num_bits(number)) + 7) / 8
        let length = width ?? natural
        guard natural <= length else { return nil }
        var bytes = [UInt8](repeating: 0, count: length)
        let written = bytes.withUnsafeMutableBufferPointer { BN_bn2binpad(number, $0.baseAddress, Int32(length)) }
        return Int(written) == length ? bytes : nil
    }
}
