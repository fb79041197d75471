internal import GatehouseCore
internal import GatehouseCrypto
internal import ProviderEngine

/// Mints and caches Sign in with Apple's client_secret: an ES256 JWT signed with the team's
/// .p8 key (apple.md §3). One secret per (team, key, client_id, key material), renewed when half of its
/// 30-day life has passed — far inside Apple's six-month maximum, so an expired secret can
/// never cause an outage.
actor AppleClientSecret {
    struct Identity: Hashable {
        var teamID: String
        var keyID: String
        var clientID: String
        var audience: String
        /// The SHA-256 of the .p8 PEM: a key replaced under the same key id signs afresh.
        var keyFingerprint: String
    }

    static let lifetime: Int64 = 30 * 86_400
    private var cache: [Identity: (secret: String, mintedAt: Int64)] = [:]
    private var keys: [String: PrivateKey] = [:]

    /// The client_secret for `identity`, signed with `privateKeyPEM`.
    func secret(for identity: Identity, privateKeyPEM: String) throws(AppleError) -> String {
        let now = Timestamp.now()
        if let cached = cache[identity], now - cached.mintedAt < Self.lifetime / 2 { return cached.secret }
        let key = try privateKey(privateKeyPEM)
        // iat is backdated a minute: Apple answers invalid_client to a secret "from the future".
        let header = #"{"alg":"ES256","kid":\#(JSONString.quote(identity.keyID))}"#
        let claims = JSONValue.object([
            "iss": .string(identity.teamID), "iat": .number(Double(now - 60)), "exp": .number(Double(now + Self.lifetime)),
            "aud": .string(identity.audience), "sub": .string(identity.clientID),
        ])
        let payload = claims.serialized()
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        let signature: [UInt8]
        do { signature = try key.sign(message: Array(signingInput.utf8), algorithm: .es256) } catch {
            throw .configuration("the private_key cannot sign ES256: \(error.reason)")
        }
        let secret = signingInput + "." + Base64URL.encode(signature)
        cache[identity] = (secret, now)
        return secret
    }

    /// Forgets a secret Apple refused, so the next call mints a fresh one.
    func invalidate(_ identity: Identity) {
        cache[identity] = nil
    }

    private func privateKey(_ pem: String) throws(AppleError) -> PrivateKey {
        if let key = keys[pem] { return key }
        // Keys pasted through environment variables often arrive with literal "\n".
        let text = pem.contains("\\n") ? pem.replacing("\\n", with: "\n") : pem
        do {
            let key = try PrivateKey(pem: text)
            keys[pem] = key
            return key
        } catch {
            throw .configuration("the private_key is not a PKCS#8 PEM EC P-256 key (.p8)")
        }
    }
}

/// Why an Apple operation failed; `reason` is safe to show the caller.
struct AppleError: Error, Sendable {
    let status: Int
    let reason: String

    static func configuration(_ reason: String) -> AppleError { AppleError(status: 400, reason: reason) }
    static func invalidToken(_ reason: String) -> AppleError { AppleError(status: 401, reason: "The identity token is not valid: \(reason)") }
    static func upstream(_ reason: String) -> AppleError { AppleError(status: 502, reason: reason) }
}
