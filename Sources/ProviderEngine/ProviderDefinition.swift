public import Carrier
public import GatehouseCore

/// One provider, as `providers/<id>/provider.json` declares it. Pure data: no executable
/// code lives in a provider file. The format is documented in docs/providers.md and
/// docs/provider.schema.json; `DefinitionReader` builds this from JSON and reports defects.
///
/// A value type whose fields live in one shared, immutable box: every request looks its
/// provider up and passes the definition along, and copying dozens of strings, dictionaries
/// and nested blocks (retaining each) cost more than the lookup. A change makes a new box.
public struct ProviderDefinition: Sendable, Hashable {
    struct Fields: Sendable, Hashable {
        var id: String
        var name: String
        var description: String?
        var url: String?
        var docs: String?
        var logo: String?
        var oauth2: OAuth2Definition?
        var oauth1: OAuth1Definition?
        var openid: OpenIDDefinition?
        var profile: JSONValue?
        var profileMapping: ProfileMapping? = nil
        var native: JSONValue?
        var carrier: CarrierDefinition? = nil
        var document: JSONValue
        var normalisedOAuth2: OAuth2Definition? = nil
        var normalisedOAuth1: OAuth1Definition? = nil
        var callbackCarriesState: Bool = true
        var requestFlowFields = RequestFlowFields()
    }

    private var box: FieldBox<Fields>

    public init(
        id: String, name: String, description: String?, url: String?, docs: String?, logo: String?,
        oauth2: OAuth2Definition?, oauth1: OAuth1Definition?, openid: OpenIDDefinition?, profile: JSONValue?, native: JSONValue?,
        document: JSONValue
    ) {
        box = FieldBox(Fields(
            id: id, name: name, description: description, url: url, docs: docs, logo: logo, oauth2: oauth2, oauth1: oauth1,
            openid: openid, profile: profile, native: native, document: document))
    }

    /// The folder name: lowercase letters, digits, `_`, `-`, `.`.
    public var id: String {
        get { box.fields.id }
        set { box = box.updated { $0.id = newValue } }
    }

    public var name: String {
        get { box.fields.name }
        set { box = box.updated { $0.name = newValue } }
    }

    public var description: String? {
        get { box.fields.description }
        set { box = box.updated { $0.description = newValue } }
    }

    /// The base URL that relative endpoint URLs are resolved against.
    public var url: String? {
        get { box.fields.url }
        set { box = box.updated { $0.url = newValue } }
    }

    public var docs: String? {
        get { box.fields.docs }
        set { box = box.updated { $0.docs = newValue } }
    }

    /// A logo file in the provider's folder.
    public var logo: String? {
        get { box.fields.logo }
        set { box = box.updated { $0.logo = newValue } }
    }

    public var oauth2: OAuth2Definition? {
        get { box.fields.oauth2 }
        set { box = box.updated { $0.oauth2 = newValue } }
    }

    public var oauth1: OAuth1Definition? {
        get { box.fields.oauth1 }
        set { box = box.updated { $0.oauth1 = newValue } }
    }

    public var openid: OpenIDDefinition? {
        get { box.fields.openid }
        set { box = box.updated { $0.openid = newValue } }
    }

    /// The `profile` block as written.
    public var profile: JSONValue? {
        get { box.fields.profile }
        set { box = box.updated { $0.profile = newValue } }
    }

    /// The `profile` block read: how `me` fetches and maps the user's profile.
    public var profileMapping: ProfileMapping? {
        get { box.fields.profileMapping }
        set { box = box.updated { $0.profileMapping = newValue } }
    }

    /// Native sign-in (Apple, carrier one-click): what a device hands over instead of a browser redirect.
    public var native: JSONValue? {
        get { box.fields.native }
        set { box = box.updated { $0.native = newValue } }
    }

    /// The `native` block of a carrier one-click provider (`"kind": "carrier"`), read strictly.
    public var carrier: CarrierDefinition? {
        get { box.fields.carrier }
        set { box = box.updated { $0.carrier = newValue } }
    }

    /// The definition exactly as written, for `/api/providers/:id`.
    public var document: JSONValue {
        get { box.fields.document }
        set { box = box.updated { $0.document = newValue } }
    }

    /// The OAuth 2 block with OAuth.io's defaults filled in: what the flows run.
    public internal(set) var normalisedOAuth2: OAuth2Definition? {
        get { box.fields.normalisedOAuth2 }
        set { box = box.updated { $0.normalisedOAuth2 = newValue } }
    }

    /// The OAuth 1 block with its defaults filled in.
    public internal(set) var normalisedOAuth1: OAuth1Definition? {
        get { box.fields.normalisedOAuth1 }
        set { box = box.updated { $0.normalisedOAuth1 = newValue } }
    }

    /// True when the callback must carry the state itself (`{{callback}}?state=…`): the
    /// authorize step has no `{{state}}` of its own, so the provider would not echo it.
    public internal(set) var callbackCarriesState: Bool {
        get { box.fields.callbackCarriesState }
        set { box = box.updated { $0.callbackCarriesState = newValue } }
    }

    /// The flow values each version's `request` endpoint needs besides the token
    /// (`requiredFields(of:)`), worked out once: every login's result describes them.
    public internal(set) var requestFlowFields: RequestFlowFields {
        get { box.fields.requestFlowFields }
        set { box = box.updated { $0.requestFlowFields = newValue } }
    }

    public struct RequestFlowFields: Sendable, Hashable {
        public var oauth2: [String]
        public var oauth1: [String]

        public init(oauth2: [String] = [], oauth1: [String] = []) {
            self.oauth2 = oauth2
            self.oauth1 = oauth1
        }
    }

    /// The highest OAuth version the provider supports, as OAuth.io reports it.
    public var defaultVersion: OAuthVersion? {
        oauth2 != nil ? .oauth2 : (oauth1 != nil ? .oauth1 : nil)
    }
}
