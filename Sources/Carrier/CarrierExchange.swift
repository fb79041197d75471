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
    private let inputs: [String: String]
    private let secrets: [String: String]
    private let environment: CarrierEnvironment
    private var bindings: [String: [UInt8]] = [:]

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

    // MARK: Evaluation

    fileprivate enum Stage {
        case request
        case response
    }

    /// Evaluates values to bytes. Crypto failures while building the request mean unusable
    /// keyset material; while reading the answer they mean it did not decrypt.
    fileprivate struct Evaluator {
        let exchange: CarrierExchange
        let stage: Stage
        var body: [(String, [UInt8])] = []
        var query: [(String, [UInt8])] = []

        init(exchange: CarrierExchange, stage: Stage) {
            self.exchange = exchange
            self.stage = stage
        }

        func failure(_ reason: String) -> CarrierError {
            stage == .request ? CarrierError(.misconfigured, reason) : CarrierError(.decryptFailed, reason)
        }

        mutating func text(_ value: CarrierValue, current: [UInt8]? = nil) throws(CarrierError) -> String {
            CarrierExchange.text(try bytes(value, current: current))
        }

        mutating func bytes(_ value: CarrierValue, current: [UInt8]? = nil) throws(CarrierError) -> [UInt8] {
            switch value {
            case .literal(let text): return Array(text.utf8)
            case .template(let parts):
                var out: [UInt8] = []
                for part in parts {
                    switch part {
                    case .text(let text): out += Array(text.utf8)
                    case .reference(let reference): out += resolve(reference)
                    }
                }
                return out
            case .current:
                guard let current else { throw failure("an operation has no input") }
                return current
            case .now(let format):
                let now = exchange.environment.nowMilliseconds
                switch format {
                case .epochMilliseconds: return Array(String(now).utf8)
                case .epochSeconds: return Array(String(now / 1000).utf8)
                case .compact(let offset): return Array(CivilTime(milliseconds: now, offsetMinutes: offset).compact.utf8)
                case .iso8601: return Array(CivilTime(milliseconds: now, offsetMinutes: 0).iso8601Seconds.utf8)
                }
            case .random(let charset, let length):
                let alphabet: [UInt8]
                switch charset {
                case .digits: alphabet = Array("0123456789".utf8)
                case .hex: alphabet = Array("0123456789abcdef".utf8)
                case .alnum: alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
                }
                // Rejection sampling keeps every character equally likely.
                let limit = 256 - 256 % alphabet.count
                var out: [UInt8] = []
                while out.count < length {
                    guard let random = exchange.environment.randomBytes(length * 2) else { throw failure("the random generator failed") }
                    for byte in random where Int(byte) < limit && out.count < length { out.append(alphabet[Int(byte) % alphabet.count]) }
                }
                return out
            case .uuid:
                guard var random = exchange.environment.randomBytes(16), random.count == 16 else { throw failure("the random generator failed") }
                random[6] = (random[6] & 0x0F) | 0x40
                random[8] = (random[8] & 0x3F) | 0x80
                let hex = Self.hex(random, upper: false)
                let characters = Array(hex)
                let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }
                return Array(groups.joined(separator: "-").utf8)
            case .concat(let parts):
                var out: [UInt8] = []
                for part in parts { out += try bytes(part, current: current) }
                return out
            case .canonical(let spec):
                var fields = spec.source == .body ? body : query
                fields.removeAll { spec.exclude.contains($0.0) || (!spec.includeEmpty && $0.1.isEmpty) }
                if spec.sorted { fields.sort { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) } }
                let joined = fields.map { name, value -> String in
                    let key = spec.percentEncode ? PercentEncoding.encode(name) : name
                    let text = CarrierExchange.text(value)
                    let encoded = spec.percentEncode ? PercentEncoding.encode(text) : text
                    return spec.pair.replacingAll("{k}", with: key).replacingAll("{v}", with: encoded)
                }.joined(separator: spec.separator)
                var out: [UInt8] = []
                if let prefix = spec.prefix { out += try bytes(prefix, current: current) }
                out += Array(joined.utf8)
                if let suffix = spec.suffix { out += try bytes(suffix, current: current) }
                return out
            case .percent(let inner):
                return Array(PercentEncoding.encode(try text(inner, current: current)).utf8)
            case .hash(let digest, let message, let output):
                let input = try bytes(message, current: current)
                let hashed: [UInt8]
                switch digest {
                case .md5: hashed = Digest.md5(input)
                case .sha1: hashed = Digest.sha1(input)
                case .sha256: hashed = Digest.sha256(input)
                }
                return Self.encoded(hashed, output)
            case .hmac(let digest, let key, let message, let output):
                let keyBytes = try bytes(key, current: current)
                let input = try bytes(message, current: current)
                let mac: [UInt8]
                switch digest {
                case .md5: mac = HMAC.md5(key: keyBytes, message: input)
                case .sha1: mac = HMAC.sha1(key: keyBytes, message: input)
                case .sha256: mac = HMAC.sha256(key: keyBytes, message: input)
                }
                return Self.encoded(mac, output)
            case .cipher(let operation):
                let key = try bytes(operation.key, current: nil)
                let iv = try operation.iv.map { (value) throws(CarrierError) in try bytes(value, current: nil) } ?? []
                let input = try decoded(try bytes(operation.input, current: current), operation.inputEncoding)
                let algorithm: CipherAlgorithm =
                    switch operation.algorithm {
                    case .aes: .aes
                    case .des: .des
                    case .tripleDES: .tripleDES
                    }
                do throws(CryptoError) {
                    let result =
                        operation.decrypting
                        ? try BlockCipher.decrypt(input, algorithm: algorithm, mode: operation.cbc ? .cbc : .ecb, key: key, iv: iv)
                        : try BlockCipher.encrypt(input, algorithm: algorithm, mode: operation.cbc ? .cbc : .ecb, key: key, iv: iv)
                    return Self.encoded(result, operation.outputEncoding)
                } catch {
                    throw failure("\(operation.algorithm.rawValue) \(operation.decrypting ? "decryption" : "encryption") failed: \(error.reason)")
                }
            case .rsa(let operation):
                let pem = try text(operation.keyPEM, current: nil)
                let input = try decoded(try bytes(operation.input, current: current), operation.inputEncoding)
                do throws(CryptoError) {
                    let result: [UInt8]
                    switch operation.kind {
                    case .decrypt: result = try RSACipherKey(privatePEM: pem).decrypt(input)
                    case .encrypt: result = try RSACipherKey(publicPEM: pem).encrypt(input)
                    case .sign: result = try RSACipherKey(privatePEM: pem).sign(input, sha1: operation.sha1)
                    }
                    return Self.encoded(result, operation.outputEncoding)
                } catch {
                    // A key that does not even parse is the keyset's fault at either stage.
                    if error == CryptoError.invalidKey("") { throw CarrierError(.misconfigured, "the RSA key in the keyset is unusable") }
                    throw failure("RSA \(operation.kind.rawValue) failed: \(error.reason)")
                }
            case .basic(let user, let password):
                let pair = try bytes(user, current: current) + [UInt8(ascii: ":")] + (try bytes(password, current: current))
                return Array(("Basic " + Base64.encode(pair)).utf8)
            case .gzip(let inner):
                let input = try bytes(inner, current: current)
                do throws(CompressionError) { return try Gzip.compress(input) } catch { throw failure(error.reason) }
            case .gunzip(let inner, let ifMagic):
                let input = try bytes(inner, current: current)
                if ifMagic, !Gzip.isGzip(input) { return input }
                do throws(CompressionError) { return try Gzip.decompress(input) } catch { throw failure("gunzip: \(error.reason)") }
            case .encode(let inner, let encoding):
                return Self.encoded(try bytes(inner, current: current), encoding)
            case .decode(let inner, let encoding):
                return try decoded(try bytes(inner, current: current), encoding)
            case .md5Hex(let inner):
                return Self.encoded(Digest.md5(try bytes(inner, current: current)), .hex)
            case .slice(let inner, let from, let to):
                let input = try bytes(inner, current: current)
                guard input.count >= to else { throw failure("a value is \(input.count) bytes, too short to slice to \(to)") }
                return Array(input[from..<to])
            case .pad(let inner, let length, let byte):
                let input = try bytes(inner, current: current)
                return input.count >= length ? Array(input.prefix(length)) : input + Array(repeating: byte, count: length - input.count)
            }
        }

        func resolve(_ reference: Reference) -> [UInt8] {
            switch reference {
            case .secret(let name): return Array((exchange.secrets[name] ?? "").utf8)
            case .input(let name): return Array((exchange.inputs[name] ?? "").utf8)
            case .binding(let name): return exchange.bindings[name] ?? []
            case .map(let map, let key):
                let keyText = CarrierExchange.text(resolve(key))
                return Array((exchange.definition.maps[map]?[keyText] ?? "").utf8)
            }
        }

        func decoded(_ input: [UInt8], _ encoding: ByteEncoding) throws(CarrierError) -> [UInt8] {
            switch encoding {
            case .raw: return input
            case .hex, .upperHex:
                guard let bytes = Self.unhex(input) else { throw failure("a value is not hex") }
                return bytes
            case .base64:
                let text = CarrierExchange.text(input.filter { $0 != 0x0A && $0 != 0x0D && $0 != 0x20 })
                guard let bytes = Base64.decode(text) else { throw failure("a value is not base64") }
                return bytes
            }
        }

        static func encoded(_ bytes: [UInt8], _ encoding: ByteEncoding) -> [UInt8] {
            switch encoding {
            case .raw: bytes
            case .hex: Array(hex(bytes, upper: false).utf8)
            case .upperHex: Array(hex(bytes, upper: true).utf8)
            case .base64: Array(Base64.encode(bytes).utf8)
            }
        }

        static func hex(_ bytes: [UInt8], upper: Bool) -> String {
            let digits = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count * 2)
            for byte in bytes {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0F)])
            }
            return String(decoding: out, as: UTF8.self)
        }

        static func unhex(_ text: [UInt8]) -> [UInt8]? {
            guard text.count % 2 == 0 else { return nil }
            func nibble(_ c: UInt8) -> UInt8? {
                switch c {
                case 0x30...0x39: c - 0x30
                case 0x61...0x66: c - 0x61 + 10
                case 0x41...0x46: c - 0x41 + 10
                default: nil
                }
            }
            var out: [UInt8] = []
            out.reserveCapacity(text.count / 2)
            var index = 0
            while index < text.count {
                guard let high = nibble(text[index]), let low = nibble(text[index + 1]) else { return nil }
                out.append(high << 4 | low)
                index += 2
            }
            return out
        }
    }

    /// The vendor's answer, for selectors and predicates.
    fileprivate struct Answer {
        let status: Int
        let headers: [VendorHeader]
        var json: JSONValue?

        func text(_ selector: Selector) -> String? {
            switch selector {
            case .status: return String(status)
            case .header(let name): return headers.first { $0.name.lowercased() == name.lowercased() }?.value
            case .path(let segments, let caseInsensitive):
                var node = json
                for segment in segments {
                    guard let object = node?.objectValue else { return nil }
                    if let exact = object[segment] {
                        node = exact
                    } else if caseInsensitive, let match = object.first(where: { $0.key.lowercased() == segment.lowercased() }) {
                        node = match.value
                    } else {
                        return nil
                    }
                }
                guard let node else { return nil }
                return CarrierDefinitionReader.scalarText(node)
            }
        }

        func holds(_ predicate: Predicate) -> Bool {
            let value = text(predicate.selector)
            switch predicate.test {
            case .equals(let expected): return value == expected
            case .nonEmpty: return !(value ?? "").isEmpty
            }
        }
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound]
            out += replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
