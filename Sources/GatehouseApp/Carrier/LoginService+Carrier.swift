internal import Carrier
internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import HTTPServer
internal import ProviderEngine

extension LoginService {
    /// Carrier one-click sign-in: the device token (and the vendor's other inputs) exchanged
    /// for the phone number under the provider's definition. Exactly one request goes to the
    /// vendor and it is never repeated, whatever happens: the token is single use, and a
    /// request that failed or timed out may still have consumed it.
    func carrierSignIn(
        _ carrier: CarrierDefinition, definition: ProviderDefinition, caller: NativeCaller, keyset: Keyset, fields: RequestFields,
        requestID: String
    ) async -> HTTPResponse {
        let provider = definition.id
        var inputs: [String: String] = [:]
        for spec in carrier.inputs {
            if let value = fields[spec.name] { inputs[spec.name] = value }
        }
        let secrets = keyset.parameters.compactMapValues { $0.stringValue }
        let started = ContinuousClock.now
        do throws(CarrierError) {
            let exchange = try CarrierExchange(
                definition: carrier, baseURL: definition.url, inputs: inputs, secrets: secrets,
                environment: .system(nowMilliseconds: Timestamp.nowMilliseconds()))
            let prepared = try exchange.prepare()
            let response: HTTPClientResponse
            do throws(HTTPClientError) {
                response = try await outbound.execute(HTTPClientRequest(
                    method: prepared.method, url: prepared.url, headers: prepared.headers.map { HTTPHeader(name: $0.name, value: $0.value) },
                    body: prepared.body, timeout: .milliseconds(prepared.timeoutMilliseconds)))
            } catch {
                // Refused before anything was sent: the definition or keyset built a bad request.
                if error == .invalidURL || error == .invalidRequest {
                    throw CarrierError(.misconfigured, "the vendor request cannot be sent (\(error.shortDescription)); check the keyset")
                }
                let reason =
                    error == .timedOut
                    ? "the vendor did not answer within \(prepared.timeoutMilliseconds) ms; the token may have been used"
                    : "the vendor could not be reached (\(error.shortDescription))"
                throw CarrierError(.transport, reason)
            }
            let outcome = try exchange.interpret(
                status: response.status, headers: response.headers.map { VendorHeader(name: $0.name, value: $0.value) }, body: response.body
            ).get()
            context.logger.info("Carrier sign-in", [
                "provider.id": provider, "request.id": requestID, "app.key": caller.app.key, "phone": PhoneNumber.masked(outcome.phone),
                "vendor.ms": String((ContinuousClock.now - started).milliseconds),
            ])
            let profile = JSONValue.object([
                "id": .string(carrierUserID(appKey: caller.app.key, phone: outcome.phone)), "phone": .string(outcome.phone),
                "raw": outcome.raw,
            ])
            guard let accessToken = try? await rememberNativeSession(NativeSession(appKey: caller.app.key, provider: provider, profile: profile))
            else { return .error(503, "store_unavailable", "the store is unavailable") }
            let credentials: JSONObject = [
                "access_token": .string(accessToken), "token_type": "bearer", "expires_in": .number(Double(Self.nativeSessionSeconds)),
                "user": profile,
            ]
            return await deliverNative(credentials, to: caller, provider: provider)
        } catch {
            context.logger.notice("Carrier sign-in refused", [
                "provider.id": provider, "request.id": requestID, "error.code": error.errorClass.rawValue, "reason": error.reason,
                "vendor.error": error.vendorCode ?? "", "vendor.ms": String((ContinuousClock.now - started).milliseconds),
            ])
            return .error(error.errorClass.httpStatus, error.errorClass.rawValue, error.reason)
        }
    }

    /// The user's id for this app: a keyed hash of the phone number, stable across sign-ins
    /// and across the app's carrier providers, but not the number itself and different for
    /// every app, so ids cannot be joined across apps or reversed without the master key.
    func carrierUserID(appKey: String, phone: String) -> String {
        let key = context.registry.box.derivedKey(purpose: "carrier-user-id")
        return Base64URL.encode(HMAC.sha256(key: key, message: Array((appKey + "\n" + phone).utf8)))
    }
}

extension Duration {
    fileprivate var milliseconds: Int64 {
        let parts = components
        return parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
