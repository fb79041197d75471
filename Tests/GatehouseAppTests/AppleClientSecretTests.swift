import Foundation
@testable import GatehouseApp
import GatehouseCore
import JOSE
import GatehouseTestSupport
import Testing

/// The RFC 7515 A.3 P-256 key as a PKCS#8 PEM, the form of Apple's .p8 files (apple.md §6).
let rfc7515P8 = """
    -----BEGIN PRIVATE KEY-----
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjpsQnnGQmL+YBIff
    H1136cspYG6+0iY7X1fCE9+E9LKhRANCAAR/zc4ncPbEXUGDy+5v20t7WAczNXvp
    7xO6z248e9FURcfxRM0bvZt+hyzf7bnuufSzaV1uqQskrYpGIyiFiOWt
    -----END PRIVATE KEY-----
    """

@Suite("Apple client secret")
struct AppleClientSecretTests {
    let identity = AppleClientSecret.Identity(
        teamID: "TEAM123456", keyID: "KEY1234567", clientID: "com.example.web", audience: "https://appleid.apple.com",
        keyFingerprint: "p8-a")

    @Test("the client_secret has Apple's header and claims, and is cached")
    func shape() async throws {
        let minter = AppleClientSecret()
        let secret = try await minter.secret(for: identity, privateKeyPEM: rfc7515P8)
        let parts = secret.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONCoding.decode(JSONValue.self, from: try #require(Base64URL.decode(parts[0])))
        #expect(header == ["alg": "ES256", "kid": "KEY1234567"])
        let claims = try JSONCoding.decode(JSONValue.self, from: try #require(Base64URL.decode(parts[1])))
        #expect(claims["iss"] == "TEAM123456" && claims["sub"] == "com.example.web" && claims["aud"] == "https://appleid.apple.com")
        guard case .number(let iat)? = claims["iat"], case .number(let exp)? = claims["exp"] else {
            Issue.record("no times")
            return
        }
        #expect(exp - iat <= 15_777_000, "within Apple's six months")
        #expect(iat <= Double(Timestamp.now()))
        #expect(Base64URL.decode(parts[2])?.count == 64, "raw r‖s, not DER")
        #expect(try await minter.secret(for: identity, privateKeyPEM: rfc7515P8) == secret, "cached")
        await minter.invalidate(identity)
        #expect(try await minter.secret(for: identity, privateKeyPEM: rfc7515P8) != secret, "signed afresh once Apple refused it")
        let escaped = rfc7515P8.replacingOccurrences(of: "\n", with: "\\n")
        #expect(try await AppleClientSecret().secret(for: identity, privateKeyPEM: escaped).split(separator: ".").count == 3)
    }

    @Test("openssl dgst -verify accepts the client_secret's signature")
    func opensslVerifies() async throws {
        let secret = try await AppleClientSecret().secret(for: identity, privateKeyPEM: rfc7515P8)
        let parts = secret.split(separator: ".").map(String.init)
        let raw = try #require(Base64URL.decode(parts[2]))
        let directory = TemporaryDirectory.make()
        try rfc7515P8.write(toFile: directory + "/key.p8", atomically: true, encoding: .utf8)
        try Data((parts[0] + "." + parts[1]).utf8).write(to: URL(fileURLWithPath: directory + "/input"))
        try Data(Self.der(r: Array(raw[0..<32]), s: Array(raw[32..<64]))).write(to: URL(fileURLWithPath: directory + "/signature.der"))
        let (exported, status) = try await offPool {
            let exported = try Self.openssl(["pkey", "-in", directory + "/key.p8", "-pubout", "-out", directory + "/public.pem"])
            return (exported, try Self.openssl([
                "dgst", "-sha256", "-verify", directory + "/public.pem", "-signature", directory + "/signature.der", directory + "/input",
            ]))
        }
        #expect(exported == 0)
        #expect(status == 0, "Verified OK")
    }

    @Test("a key that is not a .p8 is a clear configuration error")
    func badKey() async {
        await #expect(throws: AppleError.self) { try await AppleClientSecret().secret(for: identity, privateKeyPEM: "not a key") }
    }

    @Test("audiences come from client_ids, services_id and client_id")
    func audiences() {
        #expect(
            AppleSignIn.audiences(["client_ids": ["com.example.app", "com.example.watch"], "services_id": "com.example.web", "client_id": "com.example.web"])
                == ["com.example.app", "com.example.watch", "com.example.web"])
        #expect(AppleSignIn.audiences(["client_ids": "a,b c"]) == ["a", "b", "c"])
    }

    @Test("the first-login name comes from Apple's user JSON or the app's fields, never empty")
    func names() {
        #expect(PersonName(appleUser: #"{"name":{"firstName":"Ada","lastName":"Lovelace"},"email":"spoof@evil"}"#) == PersonName(first: "Ada", last: "Lovelace"))
        #expect(PersonName(appleUser: #"{"name":{"firstName":"","lastName":""}}"#) == nil)
        #expect(PersonName(appleUser: "not json") == nil)
        #expect(PersonName(first: "", last: nil) == nil)
    }

    static func openssl(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try launch(process)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// DER `SEQUENCE { INTEGER r, INTEGER s }`, the form openssl verifies.
    static func der(r: [UInt8], s: [UInt8]) -> [UInt8] {
        func integer(_ bytes: [UInt8]) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(r) + integer(s)
        return [0x30, UInt8(body.count)] + body
    }
}

@Suite("Apple real_user_status policy")
struct AppleRealUserStatusTests {
    func claims(_ status: Int?) throws -> JWTClaims {
        var raw: JSONObject = ["iss": "https://appleid.apple.com", "aud": "com.example.app", "sub": "001.a.1"]
        if let status { raw["real_user_status"] = .number(Double(status)) }
        return try JWTClaims(json: .object(raw))
    }

    @Test("nobody is blocked by default; a minimum refuses lower statuses and lets absent ones pass")
    func policy() throws {
        try AppleSignIn.checkRealUserStatus(claims(1), keyset: [:])
        try AppleSignIn.checkRealUserStatus(claims(2), keyset: ["minimum_real_user_status": "2"])
        try AppleSignIn.checkRealUserStatus(claims(nil), keyset: ["minimum_real_user_status": 2])
        #expect(throws: AppleError.self) { try AppleSignIn.checkRealUserStatus(claims(1), keyset: ["minimum_real_user_status": "2"]) }
        #expect(throws: AppleError.self) { try AppleSignIn.checkRealUserStatus(claims(0), keyset: ["minimum_real_user_status": 1]) }
    }
}
