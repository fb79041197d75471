/// The `native` block of a carrier one-click provider (`"kind": "carrier"`): everything the
/// engine needs to turn a device token into a phone number, as data. Read by
/// `CarrierDefinitionReader`; executed by `CarrierExchange`. Format: docs/providers.md.
public struct CarrierDefinition: Sendable, Hashable {
    /// Which vendor protocol this is, for logs and docs (`emay`, `geetest`, ...).
    public var vendor: String
    /// Keyset parameters the definition reads as `{{secret.NAME}}`.
    public var secrets: [SecretSpec]
    /// Fields of the `POST /auth/:provider/native` body the definition reads as `{{input.NAME}}`.
    public var inputs: [InputSpec]
    /// Enumerations such as operator codes, used as `{{map.NAME[input.operator_type]}}`.
    public var maps: [String: [String: String]]
    /// Values computed once per exchange, in order; later ones may use earlier ones.
    public var bindings: [NamedValue]
    public var request: CarrierRequest
    public var response: CarrierResponse
}

/// A keyset parameter the vendor needs.
public struct SecretSpec: Sendable, Hashable {
    public var name: String
    public var required: Bool
}

/// An input the device (or app backend) sends.
public struct InputSpec: Sendable, Hashable {
    public var name: String
    public var required: Bool
    public var maxLength: Int
}

/// A name and the value computed for it.
public struct NamedValue: Sendable, Hashable {
    public var name: String
    public var value: CarrierValue
}

/// The one request sent to the vendor.
public struct CarrierRequest: Sendable, Hashable {
    public var method: String
    /// Absolute, or a path resolved against the provider's `url`.
    public var url: CarrierValue
    public var query: [NamedValue]
    public var headers: [NamedValue]
    /// HTTP Basic credentials (JVerification).
    public var basic: BasicCredentials?
    public var body: CarrierBody?
    /// The whole exchange's deadline. The request is never repeated: device tokens are single
    /// use, and a request that timed out may still have reached the vendor.
    public var timeoutMilliseconds: Int
}

public struct BasicCredentials: Sendable, Hashable {
    public var user: CarrierValue
    public var password: CarrierValue
}

/// How the body is encoded.
public enum BodyEncoding: String, Sendable, Hashable {
    case json
    case form
    case none
}

/// The request body: typed fields, then byte transforms (gzip, encryption).
public struct CarrierBody: Sendable, Hashable {
    public var encoding: BodyEncoding
    public var fields: [BodyField]
    /// Applied in order to the serialised body; each works on `.current`.
    public var transforms: [CarrierValue]
    /// Content-Type, unless a header sets it.
    public var contentType: String? {
        switch encoding {
        case .json: "application/json;charset=utf-8"
        case .form: "application/x-www-form-urlencoded"
        case .none: nil
        }
    }
}

/// JSON type of a body field (form fields are always text).
public enum FieldType: String, Sendable, Hashable {
    case string
    case int
    case bool
}

public struct BodyField: Sendable, Hashable {
    public var name: String
    public var value: CarrierValue
    public var type: FieldType
    /// Leave the field out, from the body and from any signature over it, when its value is empty.
    public var omitIfEmpty: Bool
}

/// How the vendor's answer is read.
public struct CarrierResponse: Sendable, Hashable {
    /// Byte transforms applied to the raw body when their condition holds (Emay's envelope).
    public var pre: [PreStep]
    /// All must hold for success.
    public var success: [Predicate]
    public var errorCode: Selector?
    public var errorMessage: Selector?
    /// Vendor code → error class; unmapped codes are `upstream`.
    public var errors: [String: CarrierErrorClass]
    public var phone: PhoneSpec
}

public struct PreStep: Sendable, Hashable {
    public var when: Predicate?
    public var ops: [CarrierValue]
}

/// Where a value of the answer is found.
public enum Selector: Sendable, Hashable {
    /// A `$.a.b` path into the JSON body; `caseInsensitive` matches member names ignoring case.
    case path([String], caseInsensitive: Bool)
    /// A response header.
    case header(String)
    /// The HTTP status code.
    case status
}

/// A test on the answer. Comparison is loose: JSON scalars compare by their text, so `200`
/// matches `"200"`.
public struct Predicate: Sendable, Hashable {
    public enum Test: Sendable, Hashable {
        case equals(String)
        case nonEmpty
    }

    public var selector: Selector
    public var test: Test
}

/// Where the phone number is and how to get it out.
public struct PhoneSpec: Sendable, Hashable {
    public var selector: Selector
    /// A transform over `.current` (the selected value's text) that yields the plaintext.
    public var decrypt: CarrierValue?
    /// The plaintext is itself JSON (MobTech): checks on it and the path to the number.
    public var then: NestedPhone?
}

public struct NestedPhone: Sendable, Hashable {
    public var require: [Predicate]
    public var selector: Selector
}
