import Foundation

/// What `GET /_config?id_token_fault=` spoils in the mock's next id_tokens, one thing each,
/// so a test can tell which of the gateway's checks refused a token.
public enum IDTokenFault: String, Sendable, CaseIterable {
    /// Valid tokens again.
    case none = ""
    /// One bit of the signature flipped.
    case signature
    /// `aud` is another client's id.
    case audience
    /// `exp` ten minutes in the past, far beyond any clock-skew leeway.
    case expired
    /// `nonce` differs from the one the authorization request carried.
    case nonce
    /// Signed by the published key but naming a `kid` the JWKS never lists, however often fetched.
    case kid
}

extension MockProvider {
    /// `GET /_config?id_token_fault=...`: every id_token from now on carries `fault`.
    public func setIDTokenFault(_ fault: IDTokenFault) async throws {
        _ = try await child.control("GET /_config?id_token_fault=\(fault.rawValue)")
    }

    /// A mock speaking only HTTPS with the PEM `certificate` and `key` (`--tls-cert`,
    /// `--tls-key`). Its control endpoints are HTTPS too, so reach them with a client that
    /// trusts the certificate; `stats()` and the other plain-HTTP helpers do not work on it.
    public static func start(tlsCertificate certificate: String, key: String) async throws -> MockProvider {
        try await offPool {
            MockProvider(
                child: try MockProcess(
                    scriptName: "mock_provider.py", arguments: ["--tls-cert", certificate, "--tls-key", key],
                    name: "mock provider (TLS)"))
        }
    }

    /// `https://127.0.0.1:<port>`, for a mock started with a TLS certificate.
    public var secureBaseURL: String { "https://127.0.0.1:\(port)" }
}

/// What `/_config?token_fault=` or `?user_fault=` makes the token endpoint or the profile do.
public enum EndpointFault: String, Sendable {
    /// Answers as usual again.
    case none = ""
    /// 500 with a JSON body echoing the request's path, `Authorization` header and body.
    case serverError = "500"
    /// Every answer held 3 s first.
    case slow
}

/// The mock endpoints a fault can spoil.
public enum FaultyEndpoint: String, Sendable {
    case token, user
}

extension MockProvider {
    /// `GET /_config?<endpoint>_fault=...`: every later call to `endpoint` meets `fault`.
    public func setEndpointFault(_ fault: EndpointFault, on endpoint: FaultyEndpoint) async throws {
        _ = try await child.control("GET /_config?\(endpoint.rawValue)_fault=\(fault.rawValue)")
    }
}
