public import GatehouseCore
internal import GatehouseCrypto
internal import Compression

/// Where randomness and the clock come from; tests freeze both to check known answers.
public struct CarrierEnvironment: Sendable {
    /// The instant every `now` of one exchange shares, in Unix milliseconds.
    public var nowMilliseconds: Int64
    /// `count` random bytes, nil if the system generator failed.
    public var randomBytes: @Sendable (Int) -> [UInt8]?

    public init(nowMilliseconds: Int64, randomBytes: @escaping @Sendable (Int) -> [UInt8]?) {
        self.nowMilliseconds = nowMilliseconds
        self.randomBytes = randomBytes
    }

    /// The real clock and the system's secure generator.
    public static func system(nowMilliseconds: Int64) -> CarrierEnvironment {
        CarrierEnvironment(nowMilliseconds: nowMilliseconds) { count in try? SecureRandom.bytes(count) }
    }
}

/// One header of the request to send or of the vendor's answer.
public struct VendorHeader: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// The single request an exchange sends. The caller performs it exactly once, within
/// `timeoutMilliseconds`, and hands the answer to `interpret`: the engine itself does no I/O,
/// so nothing in it can repeat a request that may already have reached the vendor.
public struct PreparedRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [VendorHeader]
    public var body: [UInt8]?
    public var timeoutMilliseconds: Int
}

/// A successful exchange.
public struct CarrierOutcome: Sendable {
    /// The normalised 11-digit number. Never log it unmasked (`PhoneNumber.masked`).
    public var phone: String
    /// The vendor's answer as JSON (after the envelope is removed), for the profile's `raw`.
    public var raw: JSONValue
}

/// One token → phone exchange under a definition: inputs and secrets are checked and the
/// `let` bindings computed at init, `prepare` builds the request, `interpret` reads the answer.
public struct CarrierExchange: Sendable {
    public let definition: CarrierDefinition
    private let baseURL: String?
    let inputs: [String: String]
    let secrets: [String: String]
    let environment: CarrierEnvironment
    var bindings: [String: [UInt8]] = [:]

    /// - Parameters:
    ///   - baseURL: the provider's `url`, against which a request path is resolved.
    ///   - inputs: the caller's fields; only declared ones are read.
    ///   - secrets: the app's keyset parameters as text.
    public init(
        definition: CarrierDefinition, baseURL: String?, inputs: [String: String], secrets: [String: String],
        environment: CarrierEnvironment
    ) throws(CarrierError) {
        self.definition = definition
        self.baseURL = baseURL
        var accepted: [String: String] = [:]
        for spec in definition.inputs {
            let value = inputs[spec.name] ?? ""
            if value.isEmpty {
                if spec.required { throw CarrierError(.invalidInput, "\(spec.name) is required") }
                continue
            }
            guard value.utf8.count <= spec.maxLength else { throw CarrierError(.invalidInput, "\(spec.name) is too long") }
            guard value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
                throw CarrierError(.invalidInput, "\(spec.name) contains control characters")
            }
            accepted[spec.name] = value
        }
        for spec in definition.secrets where spec.required && (secrets[spec.name] ?? "").isEmpty {
            throw CarrierError(.misconfigured, "the app's keyset lacks the parameter '\(spec.name)'")
        }
        self.inputs = accepted
        self.secrets = secrets
        self.environment = environment
        for binding in definition.bindings {
            var evaluator = Evaluator(exchange: self, stage: .request)
            bindings[binding.name] = try evaluator.bytes(binding.value)
        }
    }

    // MARK: Request

    public func prepare() throws(CarrierError) -> PreparedRequest {
        let request = definition.request
        var evaluator = Evaluator(exchange: self, stage: .request)
        // Fields that sign other fields (canonical) are computed last, over everything else,
        // so a signature covers exactly the fields that are sent.
        var query: [(String, [UInt8])?] = Array(repeating: nil, count: request.query.count)
        var body: [(BodyField, [UInt8])?] = Array(repeating: nil, count: request.body?.fields.count ?? 0)
        for pass in [false, true] {
            for (index, item) in request.query.enumerated() where item.value.dependsOnFields == pass {
                query[index] = (item.name, try evaluator.bytes(item.value))
                evaluator.query = query.compactMap { $0 }
            }
            for (index, field) in (request.body?.fields ?? []).enumerated() where field.value.dependsOnFields == pass {
                let value = try evaluator.bytes(field.value)
                guard !(field.omitIfEmpty && value.isEmpty) else { continue }
                body[index] = (field, value)
                evaluator.body = body.compactMap { $0 }.map { ($0.0.name, $0.1) }
            }
        }
        var url = Self.text(try evaluator.bytes(request.url))
        if url.hasPrefix("/") {
            guard let baseURL else { throw CarrierError(.misconfigured, "a relative request url needs the provider's url") }
            url = baseURL + url
        }
        let pairs = query.compactMap { $0 }
        if !pairs.isEmpty {
            url += (url.contains("?") ? "&" : "?") + pairs.map { PercentEncoding.encode($0.0) + "=" + PercentEncoding.encode(Self.text($0.1)) }
                .joined(separator: "&")
        }
        var headers: [VendorHeader] = []
        var bytes: [UInt8]?
        if let spec = request.body {
            let fields = body.compactMap { $0 }
            var serialised: [UInt8]
            switch spec.encoding {
            case .json: serialised = try Self.json(fields)
            case .form:
                serialised = Array(fields.map { PercentEncoding.encode($0.0.name) + "=" + PercentEncoding.encode(Self.text($0.1)) }
                    .joined(separator: "&").utf8)
            case .none: serialised = []
            }
            for transform in spec.transforms {
                serialised = try evaluator.bytes(transform, current: serialised)
            }
            bytes = serialised
            if let type = spec.contentType { headers.append(VendorHeader(name: "Content-Type", value: type)) }
        }
        if let basic = request.basic {
            let value = try evaluator.bytes(.basic(user: basic.user, password: basic.password))
            headers.append(VendorHeader(name: "Authorization", value: Self.text(value)))
        }
        for header in request.headers {
            let value = Self.text(try evaluator.bytes(header.value))
            headers.removeAll { $0.name.lowercased() == header.name.lowercased() }
            headers.append(VendorHeader(name: header.name, value: value))
        }
        return PreparedRequest(method: request.method, url: url, headers: headers, body: bytes, timeoutMilliseconds: request.timeoutMilliseconds)
    }

    /// Typed JSON: strings quoted, `int` fields as bare integers, `bool` as true/false.
    private static func json(_ fields: [(BodyField, [UInt8])]) throws(CarrierError) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (index, (field, value)) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.append(field.name, to: &out)
            out.append(UInt8(ascii: ":"))
            let text = text(value)
            switch field.type {
            case .string: JSONString.append(text, to: &out)
            case .int:
                let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
                guard !digits.isEmpty, digits.utf8.count <= 19, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw CarrierError(.invalidInput, "\(field.name) must be an integer")
                }
                out += Array(text.utf8)
            case .bool:
                guard text == "true" || text == "false" else { throw CarrierError(.invalidInput, "\(field.name) must be true or false") }
                out += Array(text.utf8)
            }
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    // MARK: Response

    /// Reads the vendor's answer: the envelope, success, error class, phone.
    public func interpret(status: Int, headers: [VendorHeader], body: [UInt8]) -> Result<CarrierOutcome, CarrierError> {
        do throws(CarrierError) {
            return .success(try read(status: status, headers: headers, body: body))
        } catch {
            return .failure(error)
        }
    }

    private func read(status: Int, headers: [VendorHeader], body: [UInt8]) throws(CarrierError) -> CarrierOutcome {
        let response = definition.response
        var answer = Answer(status: status, headers: headers, json: nil)
        var bytes = body
        var evaluator = Evaluator(exchange: self, stage: .response)
        for step in response.pre where step.when.map({ answer.holds($0) }) ?? true {
            for op in step.ops { bytes = try evaluator.bytes(op, current: bytes) }
        }
        answer.json = JSONValue.parse(bytes)
        let succeeded = response.success.allSatisfy { answer.holds($0) }
        let code = response.errorCode.flatMap { answer.text($0) }
        let message = response.errorMessage.flatMap { answer.text($0) }
        guard succeeded else {
            if let code, let mapped = response.errors[code] {
                throw CarrierError(mapped, "the vendor answered \(code)\(message.map { ": " + $0 } ?? "")", vendorCode: code, vendorMessage: message)
            }
            if answer.json == nil, code == nil {
                throw CarrierError(.upstream, "the vendor's answer (HTTP \(status)) is not JSON")
            }
            throw CarrierError(
                .upstream, "the vendor refused the exchange (\(code ?? "HTTP \(status)"))\(message.map { ": " + $0 } ?? "")",
                vendorCode: code, vendorMessage: message)
        }
        guard let json = answer.json else { throw CarrierError(.upstream, "the vendor's answer (HTTP \(status)) is not JSON") }
        guard let selected = answer.text(response.phone.selector), !selected.isEmpty else {
            throw CarrierError(.carrierFailed, "the vendor reported success without a phone number", vendorCode: code)
        }
        var phoneBytes = Array(selected.utf8)
        if let decrypt = response.phone.decrypt { phoneBytes = try evaluator.bytes(decrypt, current: phoneBytes) }
        if let nested = response.phone.then {
            guard let inner = JSONValue.parse(phoneBytes) else {
                throw CarrierError(.decryptFailed, "the decrypted phone record is not JSON")
            }
            let innerAnswer = Answer(status: status, headers: [], json: inner)
            guard nested.require.allSatisfy({ innerAnswer.holds($0) }) else {
                throw CarrierError(.carrierFailed, "the decrypted phone record says the number is not valid")
            }
            guard let number = innerAnswer.text(nested.selector) else {
                throw CarrierError(.carrierFailed, "the decrypted phone record has no number")
            }
            phoneBytes = Array(number.utf8)
        }
        guard let text = String(validating: phoneBytes, as: UTF8.self) else { throw CarrierError(.decryptFailed, "the phone number did not decrypt to text") }
        let phone = PhoneNumber.normalised(text)
        guard PhoneNumber.isMainlandMobile(phone) else { throw CarrierError(.invalidPhone, "the vendor's number is not a mainland mobile number") }
        return CarrierOutcome(phone: phone, raw: json)
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
