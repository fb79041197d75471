internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import HTTPServer
internal import JOSE
internal import ProviderEngine

extension LoginService {
    /// `POST /auth/apple/notifications`: Apple's server-to-server events (apple.md §1). The
    /// body is unauthenticated, so the JWS is verified against Apple's keys and routed by its
    /// audience to the apps that accept it. Each event is recorded once by `jti` (Apple may
    /// deliver twice) and forwarded to the app's `notification_url` keyset parameter.
    func appleNotification(_ request: HTTPRequest) async -> HTTPResponse {
        guard let body = JSONValue.parse(request.body), let payload = body["payload"]?.stringValue else {
            return .error(400, "invalid_request", "expected a JSON body with a payload")
        }
        guard let definition = context.providers.definition("apple"), let openid = definition.openid, let jwksURI = openid.jwksURI else {
            return .error(404, "not_found", "apple is not configured")
        }
        // The body is anyone's to send: the signature is checked before any app is read, with
        // the token's own audiences, which must then belong to an app here.
        let claims: JWTClaims
        do throws(JOSEError) {
            let unverified = try JWTClaims(payload: try JWS(compact: payload, allowedAlgorithms: [.rs256]).payload)
            var verifier = JWTVerifier(issuer: openid.issuer, audiences: unverified.aud, algorithms: [.rs256], leeway: AppleSignIn.leeway)
            verifier.requiresSubject = false
            verifier.requiresKeyID = true
            claims = try await verifier.verify(payload, using: apple.keys, url: jwksURI)
        } catch {
            context.logger.notice("Apple notification refused", ["request.id": request.requestID, "error": error.reason])
            return .error(400, "invalid_token", "the notification is not valid: \(error.reason)")
        }
        let subscribers: [AppleSubscriber]
        do throws(RegistryError) {
            subscribers = try await appleSubscribers().filter { claims.aud.contains(where: $0.audiences.contains) }
        } catch {
            return .error(503, "store_unavailable", "the store is unavailable")
        }
        guard !subscribers.isEmpty else { return .error(400, "invalid_token", "the notification is not meant for an app here") }
        // `events` is a JSON document inside a string claim; parse it a second time.
        guard let eventsText = claims.raw["events"]?.stringValue,
            let events = JSONValue.parse(Array(eventsText.utf8)), let type = events["type"]?.stringValue
        else { return .error(400, "invalid_request", "the notification has no events") }
        let jti = claims.raw["jti"]?.stringValue ?? Hex.encode(Array(payload.utf8.suffix(32)))
        let event = JSONValue.object([
            "provider": "apple", "type": .string(type), "sub": events["sub"] ?? .null, "event_time": events["event_time"] ?? .null,
            "email": events["email"] ?? .null, "is_private_email": events["is_private_email"].map { .bool($0 == true || $0 == "true") } ?? .null,
            "jti": .string(jti), "aud": .string(claims.aud.first ?? ""),
        ])
        let record = event.serialized()
        let fresh: Bool
        do throws(StoreError) {
            fresh = try await putSealed(record, id: "apple-event:" + jti, ttlSeconds: 30 * 86_400)
        } catch {
            // Not a 2xx: Apple delivers the event again later instead of it being lost.
            return .error(503, "store_unavailable", "the store is unavailable")
        }
        guard fresh else { return .json(JSONValue.object(["status": "duplicate"])) }
        let subject = events["sub"]?.stringValue ?? ""
        // Apple's event_time is in milliseconds; a value no clock could show is ignored.
        let eventTime = events["event_time"]?.numberValue.flatMap { $0 >= 0 && $0 < 1e15 ? Int64($0 / 1000) : nil }
        for subscriber in subscribers {
            if type == "consent-revoked" || type == "account-delete" || type == "account-deleted" {
                // Sign-out and unlink (apple.md §1): the name goes, and so do earlier sign-ins' `me`.
                _ = try? await context.store.takeRecord("apple-name:\(subscriber.appKey):\(subject)")
                await recordAppleUnlink(appKey: subscriber.appKey, subject: subject, at: eventTime ?? Timestamp.now())
            }
            if let url = subscriber.notificationURL { forward(event, to: url, appKey: subscriber.appKey) }
        }
        context.logger.info("Apple notification", ["apple.event": type, "request.id": request.requestID])
        return .json(JSONValue.object(["status": "accepted"]))
    }

    private struct AppleSubscriber: Sendable {
        var appKey: String
        var audiences: [String]
        var notificationURL: String?
    }

    /// The apps with an apple keyset. An unavailable store is an error, not "no app": Apple
    /// must deliver the event again rather than be told nobody wants it. A record that cannot
    /// be opened only leaves its app out.
    private func appleSubscribers() async throws(RegistryError) -> [AppleSubscriber] {
        var apps: [App] = []
        do { apps = try await context.registry.apps() } catch where error.code == .unavailable { throw error } catch {}
        var result: [AppleSubscriber] = []
        for app in apps {
            let found: Keyset?
            do { found = try await context.registry.keyset(appKey: app.key, provider: "apple") } catch where error.code == .unavailable {
                throw error
            } catch { found = nil }
            guard let keyset = found else { continue }
            let url = keyset.parameters["notification_url"]?.stringValue.flatMap { text in WebURL(text) == nil ? nil : text }
            result.append(AppleSubscriber(appKey: app.key, audiences: AppleSignIn.audiences(keyset.parameters), notificationURL: url))
        }
        return result
    }

    /// Delivers an event to the app in the background: three attempts, one, four and sixteen
    /// seconds apart, so a briefly unavailable app backend still hears about it.
    private func forward(_ event: JSONValue, to url: String, appKey: String) {
        let outbound = self.outbound
        let logger = context.logger
        Task {
            let body = event.serialized()
            for attempt in 0..<3 {
                if attempt > 0 { try? await Task.sleep(for: .seconds(1 << (2 * (attempt - 1)))) }
                let request = HTTPClientRequest(
                    method: "POST", url: url, headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: body,
                    timeout: .seconds(10))
                if let response = try? await outbound.execute(request), (200..<300).contains(response.status) { return }
            }
            logger.warning("Apple notification not delivered", ["app.key": appKey])
        }
    }
}
