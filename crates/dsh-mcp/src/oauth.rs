//! OAuth 2.1 resource-server mode for `dsh mcp --http`: accepting the JWT
//! access tokens an authorization server issued for this server, and telling
//! clients where to get one.
//!
//! An [`OAuth`] holds the issuer's signing keys (a JWKS, read from a file or
//! fetched from the `jwks_uri` of the issuer's metadata) and checks a bearer
//! token ([`OAuth::authorize`]):
//!
//! - the header: `alg` must be an asymmetric algorithm (`RS256`, `RS384`,
//!   `RS512`, `PS256`, `PS384`, `PS512`, `ES256`, `ES384`, `EdDSA`); `none`
//!   and every HMAC algorithm (`HS*`) are refused, so neither an unsigned
//!   token nor one "signed" with the public key as an HMAC secret passes. A
//!   `crit` header is refused (we understand no extension). Keys named in
//!   the token (`jwk`, `jku`, `x5u`, `x5c`) are never used;
//! - the key: the one whose `kid` the token names (any key when it names
//!   none), and its `kty` (and curve) must fit the header's `alg`, as must
//!   its own `alg` when it has one; keys for encryption (`use: enc`) and
//!   symmetric keys (`kty: oct`) are never loaded;
//! - the claims: `iss` exactly the issuer, `aud` (a string or an array)
//!   containing the audience — the RFC 8707 resource indicator —, `exp` in
//!   the future and `nbf`, when present, in the past, each with
//!   [`LEEWAY_SECONDS`] of leeway for clocks that differ; `sub` present and
//!   not empty;
//! - the scopes: every required scope in `scope` (space-separated) or `scp`
//!   (an array, or a space-separated string), else *insufficient scope*.
//!
//! The principal of a token is `oauth:SUB`: a token file's names never hold
//! a `:`, so a JWT's subject cannot pose as a static token's principal.
//!
//! # Keys and their refresh
//!
//! The keys are loaded when the server starts (a failure is a start-up
//! error) and kept. A token naming a `kid` the set lacks makes us load the
//! set again — re-read the file or re-fetch the URL — once, and then look
//! again; so is a set older than [`MAX_KEY_AGE`], so that a key the issuer
//! withdrew stops being accepted. Loads are at most one per
//! [`MIN_REFRESH_INTERVAL`] and never concurrent: someone presenting tokens
//! with made-up `kid`s makes us fetch at most once per interval, not once per
//! request. A failed load keeps the keys we had.
//!
//! # Caveats
//!
//! This build fetches over plain `http://` only (its HTTP client has no TLS):
//! with an `https://` issuer, give the JWKS as a file and keep the file
//! current with another job (`curl` from a timer); it is re-read as above.
//! Tokens are not introspected (RFC 7662), so a revoked token stays valid
//! until it expires: keep access tokens short-lived.

use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use reqwest::Url;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Leeway for `exp` and `nbf`, in seconds: clocks of the issuer and of this
/// machine may differ by this much.
pub const LEEWAY_SECONDS: u64 = 30;

/// The least time between two loads of the keys, whatever tokens arrive.
pub const MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(10);

/// How long loaded keys are trusted before the next token loads them again.
pub const MAX_KEY_AGE: Duration = Duration::from_secs(3600);

/// The longest token looked at; longer ones are refused unparsed.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The largest metadata or JWKS document read.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The path of the protected-resource metadata (RFC 9728).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Where the issuer's keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A JWKS file, re-read on refresh.
    File(PathBuf),
    /// A JWKS URL (`http://`), re-fetched on refresh.
    Url(String),
    /// The `jwks_uri` of the issuer's metadata, discovered at start.
    Discover,
}

/// What the resource server is configured with.
#[derive(Debug, Clone)]
pub struct OAuthSettings {
    /// The authorization server's issuer identifier: `iss` must equal it.
    pub issuer: String,
    /// This server's audience: `aud` must contain it.
    pub audience: String,
    /// The URL of the MCP endpoint, named in the protected-resource
    /// metadata (`resource`); an absolute `http(s)` URL.
    pub resource: String,
    /// Scopes every token must carry.
    pub scopes: Vec<String>,
    /// Where the keys come from.
    pub keys: KeySource,
    /// The least time between two loads of the keys
    /// ([`MIN_REFRESH_INTERVAL`] unless a test wants less).
    pub min_refresh_interval: Duration,
}

impl OAuthSettings {
    /// Settings with the default refresh interval.
    #[must_use]
    pub fn new(issuer: String, audience: String, resource: String, keys: KeySource) -> Self {
        OAuthSettings {
            issuer,
            audience,
            resource,
            scopes: Vec::new(),
            keys,
            min_refresh_interval: MIN_REFRESH_INTERVAL,
        }
    }
}

/// Why the resource server cannot start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError(pub String);

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OAuthError {}

/// Why a bearer token is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRefusal {
    /// Not a valid token for this server (401 `invalid_token`); the text
    /// says why without repeating anything from the token.
    Invalid(&'static str),
    /// Valid, but without a required scope (403 `insufficient_scope`).
    InsufficientScope,
}

/// A key of the issuer's set, ready to verify.
struct StoredKey {
    kid: Option<String>,
    /// The key's own `alg`, when it names one.
    alg: Option<String>,
    kind: KeyKind,
    key: DecodingKey,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    Rsa,
    P256,
    P384,
    Ed25519,
}

impl KeyKind {
    /// Whether a token signed with `alg` can be verified by a key of this kind.
    fn fits(self, alg: Algorithm) -> bool {
        use Algorithm::*;
        match self {
            KeyKind::Rsa => matches!(alg, RS256 | RS384 | RS512 | PS256 | PS384 | PS512),
            KeyKind::P256 => alg == ES256,
            KeyKind::P384 => alg == ES384,
            KeyKind::Ed25519 => alg == EdDSA,
        }
    }
}

/// The keys as loaded, and when.
struct KeySet {
    keys: Vec<StoredKey>,
    loaded: Instant,
}

impl KeySet {
    fn has_kid(&self, kid: &str) -> bool {
        self.keys.iter().any(|k| k.kid.as_deref() == Some(kid))
    }
}

/// The resource server: settings, the issuer's keys, and their refresh.
pub struct OAuth {
    settings: OAuthSettings,
    /// The JWKS location once discovered.
    jwks: JwksLocation,
    keys: RwLock<Arc<KeySet>>,
    /// Held while loading; holds when the last load was attempted.
    refresh: tokio::sync::Mutex<Option<Instant>>,
    client: reqwest::Client,
    loads: AtomicU64,
    metadata_url: String,
    metadata_paths: Vec<String>,
}

#[derive(Debug, Clone)]
enum JwksLocation {
    File(PathBuf),
    Url(String),
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("issuer", &self.settings.issuer)
            .field("audience", &self.settings.audience)
            .field("resource", &self.settings.resource)
            .field("jwks", &self.jwks)
            .finish_non_exhaustive()
    }
}

/// The algorithm a header names, if it is one we accept.
fn accepted_alg(name: &str) -> Result<Algorithm, &'static str> {
    Ok(match name {
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "EdDSA" => Algorithm::EdDSA,
        n if n.eq_ignore_ascii_case("none") => {
            return Err("unsigned tokens (alg none) are refused")
        }
        n if n.len() >= 2 && n[..2].eq_ignore_ascii_case("HS") => {
            return Err("HMAC-signed tokens are refused: only the issuer's asymmetric keys sign")
        }
        _ => return Err("the token's alg is not one this server accepts"),
    })
}

/// The header fields that matter, read before any signature check.
struct TokenHeader {
    alg: Algorithm,
    kid: Option<String>,
}

fn read_header(token: &str) -> Result<TokenHeader, &'static str> {
    const MALFORMED: &str = "the token is not a JWT (three base64url parts)";
    let mut parts = token.split('.');
    let (Some(header), Some(_), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(MALFORMED);
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header.trim_end_matches('='))
        .map_err(|_| MALFORMED)?;
    let Ok(Value::Object(header)) = serde_json::from_slice::<Value>(&bytes) else {
        return Err("the token's header is not a JSON object");
    };
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or("the token's header has no alg")?;
    let alg = accepted_alg(alg)?;
    if header.contains_key("crit") {
        return Err("the token's header has critical extensions this server does not understand");
    }
    let kid = match header.get("kid") {
        None => None,
        Some(Value::String(kid)) => Some(kid.clone()),
        Some(_) => return Err("the token's kid is not a string"),
    };
    Ok(TokenHeader { alg, kid })
}

/// A string claim or an array of strings.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scopes {
    Text(String),
    List(Vec<String>),
}

/// The claims we read beyond those the validation checks.
#[derive(Deserialize)]
struct Claims {
    sub: String,
    // A string: an array of issuers is not "exactly the issuer".
    #[allow(dead_code)]
    iss: String,
    scope: Option<String>,
    scp: Option<Scopes>,
}

impl Claims {
    fn scopes(&self) -> Vec<&str> {
        let mut scopes: Vec<&str> = self
            .scope
            .as_deref()
            .map(|s| s.split_whitespace().collect())
            .unwrap_or_default();
        match &self.scp {
            Some(Scopes::Text(s)) => scopes.extend(s.split_whitespace()),
            Some(Scopes::List(list)) => scopes.extend(list.iter().map(String::as_str)),
            None => {}
        }
        scopes
    }
}

fn describe(error: &jsonwebtoken::errors::Error) -> &'static str {
    use jsonwebtoken::errors::ErrorKind::*;
    match error.kind() {
        ExpiredSignature => "the token has expired",
        ImmatureSignature => "the token is not valid yet (nbf)",
        InvalidIssuer => "the token was not issued by this server's authorization server",
        InvalidAudience => "the token is not meant for this server (aud)",
        MissingRequiredClaim(claim) => match claim.as_str() {
            "exp" => "the token has no exp claim",
            "iss" => "the token has no iss claim",
            "aud" => "the token has no aud claim",
            "sub" => "the token has no sub claim",
            _ => "the token lacks a required claim",
        },
        InvalidSignature => "the token's signature does not verify",
        InvalidAlgorithm => "the token's alg does not fit the key",
        Json(_) => "the token's claims are malformed or lack sub or iss",
        _ => "the token is malformed",
    }
}

/// Keys of a JWKS document: those that can verify signatures; entries of
/// other kinds or uses are skipped, not errors (a set may hold encryption
/// keys, or key types this build does not know).
fn parse_jwks(document: &[u8]) -> Result<Vec<StoredKey>, String> {
    let value: Value =
        serde_json::from_slice(document).map_err(|e| format!("not a JSON document: {e}"))?;
    let entries = value
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("not a JWKS: no \"keys\" array")?;
    let text =
        |entry: &Value, name: &str| entry.get(name).and_then(Value::as_str).map(String::from);
    let mut keys = Vec::new();
    for entry in entries {
        if text(entry, "use").is_some_and(|u| u != "sig") {
            continue;
        }
        if let Some(ops) = entry.get("key_ops").and_then(Value::as_array) {
            if !ops.iter().any(|op| op.as_str() == Some("verify")) {
                continue;
            }
        }
        let alg = text(entry, "alg");
        // A key pinned to an algorithm we refuse (HS256, none) is never used.
        if alg.as_deref().is_some_and(|a| accepted_alg(a).is_err()) {
            continue;
        }
        let crv = text(entry, "crv");
        let built = match (text(entry, "kty").as_deref(), crv.as_deref()) {
            (Some("RSA"), _) => match (text(entry, "n"), text(entry, "e")) {
                (Some(n), Some(e)) => {
                    DecodingKey::from_rsa_components(&n, &e).map(|k| (KeyKind::Rsa, k))
                }
                _ => continue,
            },
            (Some("EC"), Some(curve @ ("P-256" | "P-384"))) => {
                match (text(entry, "x"), text(entry, "y")) {
                    (Some(x), Some(y)) => DecodingKey::from_ec_components(&x, &y).map(|k| {
                        let kind = if curve == "P-256" {
                            KeyKind::P256
                        } else {
                            KeyKind::P384
                        };
                        (kind, k)
                    }),
                    _ => continue,
                }
            }
            (Some("OKP"), Some("Ed25519")) => match text(entry, "x") {
                Some(x) => DecodingKey::from_ed_components(&x).map(|k| (KeyKind::Ed25519, k)),
                None => continue,
            },
            // `oct` (a shared secret) above all: never a verification key here.
            _ => continue,
        };
        if let Ok((kind, key)) = built {
            keys.push(StoredKey {
                kid: text(entry, "kid"),
                alg,
                kind,
                key,
            });
        }
    }
    Ok(keys)
}

/// The URL of the protected-resource metadata of `resource` (RFC 9728 §3.1:
/// the well-known path goes between the host and the resource's path).
///
/// # Errors
/// When `resource` is not an absolute `http(s)` URL without a query or
/// fragment.
pub fn metadata_url(resource: &str) -> Result<String, OAuthError> {
    let url = Url::parse(resource)
        .map_err(|e| OAuthError(format!("the resource {resource:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https")
        || url.host_str().is_none()
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(OAuthError(format!(
            "the resource {resource:?} must be an http(s) URL without a query or fragment"
        )));
    }
    let path = url.path().trim_end_matches('/');
    let mut origin = url.origin().ascii_serialization();
    origin.push_str(METADATA_PATH);
    origin.push_str(path);
    Ok(origin)
}

/// Where an issuer's metadata may be: RFC 8414's well-known path (inserted
/// before the issuer's path, then appended), then OpenID Connect's (appended).
fn metadata_candidates(issuer: &Url) -> Vec<String> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    let mut candidates = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/oauth-authorization-server"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ];
    candidates.dedup();
    candidates
}

/// Whether `scope` is an RFC 6749 scope token (printable ASCII without
/// space, `"` or `\`), so that it can be quoted in a header.
fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

fn plain_http(url: &str, what: &str) -> Result<(), OAuthError> {
    let parsed =
        Url::parse(url).map_err(|e| OAuthError(format!("{what} {url:?} is not a URL: {e}")))?;
    match parsed.scheme() {
        "http" => Ok(()),
        "https" => Err(OAuthError(format!(
            "{what} {url} is https, and this build fetches over plain http only: give the issuer's JWKS as a file (--jwks-file), kept current by another job"
        ))),
        other => Err(OAuthError(format!(
            "{what} {url} is not an http URL (scheme {other})"
        ))),
    }
}

impl OAuth {
    /// Checks the settings, finds the keys (discovering the `jwks_uri` when
    /// asked to) and loads them.
    ///
    /// # Errors
    /// An [`OAuthError`] saying what is wrong: a setting, the issuer's
    /// metadata, or the keys (none usable is an error too).
    pub async fn start(settings: OAuthSettings) -> Result<OAuth, OAuthError> {
        let issuer = Url::parse(&settings.issuer).map_err(|e| {
            OAuthError(format!(
                "the issuer {:?} is not a URL: {e}",
                settings.issuer
            ))
        })?;
        if !matches!(issuer.scheme(), "http" | "https") || issuer.host_str().is_none() {
            return Err(OAuthError(format!(
                "the issuer {} must be an http(s) URL",
                settings.issuer
            )));
        }
        if settings.audience.is_empty() {
            return Err(OAuthError("the audience is empty".into()));
        }
        if let Some(bad) = settings.scopes.iter().find(|s| !is_scope_token(s)) {
            return Err(OAuthError(format!(
                "the scope {bad:?} is not a scope token (printable ASCII without spaces, quotes or backslashes)"
            )));
        }
        let metadata_url = metadata_url(&settings.resource)?;
        let resource_path = Url::parse(&settings.resource)
            .map(|u| u.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        let mut metadata_paths = vec![METADATA_PATH.to_owned(), format!("{METADATA_PATH}/mcp")];
        let own = format!("{METADATA_PATH}{resource_path}");
        if !metadata_paths.contains(&own) {
            metadata_paths.push(own);
        }
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|e| OAuthError(format!("cannot make an HTTP client: {e}")))?;
        let jwks = match &settings.keys {
            KeySource::File(path) => JwksLocation::File(path.clone()),
            KeySource::Url(url) => {
                plain_http(url, "the JWKS URL")?;
                JwksLocation::Url(url.clone())
            }
            KeySource::Discover => {
                JwksLocation::Url(discover_jwks_uri(&client, &settings.issuer, &issuer).await?)
            }
        };
        let keys = load(&client, &jwks).await.map_err(OAuthError)?;
        if keys.is_empty() {
            return Err(OAuthError(format!(
                "the JWKS at {} holds no key that can verify signatures (RSA, EC P-256/P-384 or Ed25519)",
                jwks.display()
            )));
        }
        Ok(OAuth {
            settings,
            jwks,
            keys: RwLock::new(Arc::new(KeySet {
                keys,
                loaded: Instant::now(),
            })),
            // The load at start does not count: the first unknown kid may
            // load again at once.
            refresh: tokio::sync::Mutex::new(None),
            client,
            loads: AtomicU64::new(1),
            metadata_url,
            metadata_paths,
        })
    }

    /// The settings it runs with.
    #[must_use]
    pub fn settings(&self) -> &OAuthSettings {
        &self.settings
    }

    /// Where the keys come from: a file path or a URL.
    #[must_use]
    pub fn jwks_location(&self) -> String {
        self.jwks.display()
    }

    /// How many times the keys were loaded (at start included).
    #[must_use]
    pub fn loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }

    /// The URL of the protected-resource metadata document.
    #[must_use]
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// Whether `path` is where this server serves its protected-resource
    /// metadata: the well-known path alone and suffixed with the resource's
    /// path (RFC 9728 §3.1).
    #[must_use]
    pub fn is_metadata_path(&self, path: &str) -> bool {
        self.metadata_paths.iter().any(|p| p == path)
    }

    /// The protected-resource metadata document (RFC 9728 §2).
    #[must_use]
    pub fn metadata(&self) -> Value {
        let mut document = json!({
            "resource": self.settings.resource,
            "authorization_servers": [self.settings.issuer],
            "bearer_methods_supported": ["header"],
        });
        if !self.settings.scopes.is_empty() {
            document["scopes_supported"] = json!(self.settings.scopes);
        }
        document
    }

    /// The `WWW-Authenticate` value of a 401 or 403: `Bearer`, the error if
    /// a token was refused, and where the metadata is.
    #[must_use]
    pub fn challenge(&self, refusal: Option<&TokenRefusal>) -> String {
        let metadata = format!("resource_metadata=\"{}\"", self.metadata_url);
        match refusal {
            None => format!("Bearer {metadata}"),
            Some(TokenRefusal::Invalid(why)) => format!(
                "Bearer error=\"invalid_token\", error_description=\"{}\", {metadata}",
                quotable(why)
            ),
            Some(TokenRefusal::InsufficientScope) => format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}\", {metadata}",
                self.settings.scopes.join(" ")
            ),
        }
    }

    /// Checks a bearer token; its principal, `oauth:SUB`.
    ///
    /// # Errors
    /// A [`TokenRefusal`]: why the token is not accepted.
    pub async fn authorize(&self, token: &str) -> Result<String, TokenRefusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(TokenRefusal::Invalid("the token is too long"));
        }
        let header = read_header(token).map_err(TokenRefusal::Invalid)?;
        let keys = self.keys_for(header.kid.as_deref()).await;
        let candidates: Vec<&StoredKey> = keys
            .keys
            .iter()
            .filter(|k| header.kid.is_none() || k.kid == header.kid)
            .collect();
        if candidates.is_empty() {
            return Err(TokenRefusal::Invalid(
                "no key of the issuer has the token's kid",
            ));
        }
        let alg_name = format!("{:?}", header.alg);
        let fitting = candidates
            .into_iter()
            .filter(|k| k.kind.fits(header.alg) && k.alg.as_deref().is_none_or(|a| a == alg_name));
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[&self.settings.audience]);
        let mut refusal = "the token's alg does not fit the issuer's key";
        let mut claims = None;
        for key in fitting {
            match jsonwebtoken::decode::<Claims>(token, &key.key, &validation) {
                Ok(data) => {
                    claims = Some(data.claims);
                    break;
                }
                Err(err) => refusal = describe(&err),
            }
        }
        let claims = claims.ok_or(TokenRefusal::Invalid(refusal))?;
        if claims.sub.is_empty() {
            return Err(TokenRefusal::Invalid("the token's sub is empty"));
        }
        let granted = claims.scopes();
        if !self
            .settings
            .scopes
            .iter()
            .all(|needed| granted.contains(&needed.as_str()))
        {
            return Err(TokenRefusal::InsufficientScope);
        }
        Ok(format!("oauth:{}", claims.sub))
    }

    fn current(&self) -> Arc<KeySet> {
        match self.keys.read() {
            Ok(keys) => keys.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The keys to look in for `kid`: loaded again first when they lack it
    /// or are old, unless a load was attempted too recently.
    async fn keys_for(&self, kid: Option<&str>) -> Arc<KeySet> {
        let wanted = |keys: &KeySet| {
            kid.is_none_or(|kid| keys.has_kid(kid)) && keys.loaded.elapsed() < MAX_KEY_AGE
        };
        let keys = self.current();
        if wanted(&keys) {
            return keys;
        }
        let mut last = self.refresh.lock().await;
        // Someone else may have loaded them while we waited.
        let keys = self.current();
        if wanted(&keys) {
            return keys;
        }
        if last.is_some_and(|at| at.elapsed() < self.settings.min_refresh_interval) {
            return keys;
        }
        *last = Some(Instant::now());
        self.loads.fetch_add(1, Ordering::Relaxed);
        match load(&self.client, &self.jwks).await {
            // An empty set is the issuer's mistake or a half-written file:
            // keep what we had.
            Ok(fresh) if !fresh.is_empty() => {
                let fresh = Arc::new(KeySet {
                    keys: fresh,
                    loaded: Instant::now(),
                });
                match self.keys.write() {
                    Ok(mut keys) => *keys = fresh.clone(),
                    Err(poisoned) => *poisoned.into_inner() = fresh.clone(),
                }
                fresh
            }
            _ => keys,
        }
    }
}

impl JwksLocation {
    fn display(&self) -> String {
        match self {
            JwksLocation::File(path) => path.display().to_string(),
            JwksLocation::Url(url) => url.clone(),
        }
    }
}

/// Loads the keys from where they are.
async fn load(client: &reqwest::Client, location: &JwksLocation) -> Result<Vec<StoredKey>, String> {
    let document = match location {
        JwksLocation::File(path) => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || std::fs::read(&path))
                .await
                .map_err(|e| format!("cannot read the JWKS file: {e}"))?
                .map_err(|e| format!("cannot read the JWKS file {}: {e}", location.display()))?
        }
        JwksLocation::Url(url) => fetch(client, url).await?,
    };
    parse_jwks(&document).map_err(|e| format!("the JWKS at {}: {e}", location.display()))
}

/// GETs a JSON document of at most [`MAX_DOCUMENT_BYTES`].
async fn fetch(client: &reqwest::Client, url: &str) -> Result<Vec<u8>, String> {
    let mut response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("cannot fetch {url}: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("cannot read {url}: {e}"))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("{url} is larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The `jwks_uri` of the issuer's metadata (RFC 8414, else OpenID Connect
/// discovery), whose `issuer` must be the issuer.
async fn discover_jwks_uri(
    client: &reqwest::Client,
    issuer_text: &str,
    issuer: &Url,
) -> Result<String, OAuthError> {
    plain_http(issuer_text, "the issuer")?;
    let mut failures = Vec::new();
    for candidate in metadata_candidates(issuer) {
        let document = match fetch(client, &candidate).await {
            Ok(document) => document,
            Err(err) => {
                failures.push(err);
                continue;
            }
        };
        let metadata: Value = serde_json::from_slice(&document).map_err(|e| {
            OAuthError(format!(
                "the issuer's metadata at {candidate} is not JSON: {e}"
            ))
        })?;
        if metadata.get("issuer").and_then(Value::as_str) != Some(issuer_text) {
            return Err(OAuthError(format!(
                "the metadata at {candidate} names another issuer than {issuer_text}"
            )));
        }
        let jwks_uri = metadata
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or_else(|| OAuthError(format!("the metadata at {candidate} has no jwks_uri")))?;
        plain_http(jwks_uri, "the issuer's jwks_uri")?;
        return Ok(jwks_uri.to_owned());
    }
    Err(OAuthError(format!(
        "cannot discover the issuer's keys: {}",
        failures.join("; ")
    )))
}

/// `text` fit to stand in a quoted header parameter.
fn quotable(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .filter(|c| !matches!(c, '"' | '\\'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{encode, EncodingKey, Header};
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};

    const ISSUER: &str = "http://issuer.test";
    const AUDIENCE: &str = "http://dsh.test/mcp";

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// An Ed25519 key: its signing key and its JWK.
    fn ed_key(kid: &str) -> (EncodingKey, Value) {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let jwk = json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "x": b64(pair.public_key().as_ref())});
        (EncodingKey::from_ed_der(pkcs8.as_ref()), jwk)
    }

    /// A P-256 key: its signing key and its JWK.
    fn ec_key(kid: &str) -> (EncodingKey, Value) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let point = pair.public_key().as_ref();
        let jwk = json!({"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
            "x": b64(&point[1..33]), "y": b64(&point[33..65])});
        (EncodingKey::from_ec_der(pkcs8.as_ref()), jwk)
    }

    fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    fn claims(sub: &str) -> Value {
        json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": now() + 300, "scope": "mcp:tools other"})
    }

    fn sign(key: &EncodingKey, alg: Algorithm, kid: Option<&str>, claims: &Value) -> String {
        let mut header = Header::new(alg);
        header.kid = kid.map(String::from);
        encode(&header, claims, key).unwrap()
    }

    /// A token with any header, unsigned (for headers the encoder refuses).
    fn forged(header: &Value, claims: &Value, signature: &[u8]) -> String {
        format!(
            "{}.{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes()),
            b64(signature)
        )
    }

    /// A JWKS file in a directory of its own, removed at the end.
    struct Jwks(PathBuf);

    impl Jwks {
        fn new(keys: &[&Value]) -> Jwks {
            use std::sync::atomic::AtomicU32;
            static N: AtomicU32 = AtomicU32::new(0);
            let dir = std::env::temp_dir().join(format!(
                "dsh-oauth-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let jwks = Jwks(dir);
            jwks.write(keys);
            jwks
        }
        fn path(&self) -> PathBuf {
            self.0.join("jwks.json")
        }
        fn write(&self, keys: &[&Value]) {
            std::fs::write(self.path(), json!({ "keys": keys }).to_string()).unwrap();
        }
    }

    impl Drop for Jwks {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    async fn server(jwks: &Jwks, scopes: &[&str], interval: Duration) -> OAuth {
        let mut settings = OAuthSettings::new(
            ISSUER.into(),
            AUDIENCE.into(),
            AUDIENCE.into(),
            KeySource::File(jwks.path()),
        );
        settings.scopes = scopes.iter().map(|s| s.to_string()).collect();
        settings.min_refresh_interval = interval;
        OAuth::start(settings).await.unwrap()
    }

    fn invalid(result: Result<String, TokenRefusal>) -> &'static str {
        match result {
            Err(TokenRefusal::Invalid(why)) => why,
            other => panic!("not refused as invalid: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_valid_token_names_its_subject_and_the_claims_are_checked() {
        let (ed, ed_jwk) = ed_key("ed");
        let (ec, ec_jwk) = ec_key("ec");
        let jwks = Jwks::new(&[&ed_jwk, &ec_jwk]);
        let oauth = server(&jwks, &[], MIN_REFRESH_INTERVAL).await;
        let good = sign(&ed, Algorithm::EdDSA, Some("ed"), &claims("alice"));
        assert_eq!(oauth.authorize(&good).await.unwrap(), "oauth:alice");
        let good = sign(&ec, Algorithm::ES256, Some("ec"), &claims("bob"));
        assert_eq!(oauth.authorize(&good).await.unwrap(), "oauth:bob");
        // No kid: any fitting key.
        let good = sign(&ec, Algorithm::ES256, None, &claims("carol"));
        assert_eq!(oauth.authorize(&good).await.unwrap(), "oauth:carol");

        let with = |edit: &dyn Fn(&mut Value)| {
            let mut c = claims("alice");
            edit(&mut c);
            sign(&ed, Algorithm::EdDSA, Some("ed"), &c)
        };
        let refused = |token: String| {
            let oauth = &oauth;
            async move { invalid(oauth.authorize(&token).await) }
        };
        assert!(refused(with(&|c| c["iss"] = json!("http://other.test")))
            .await
            .contains("issued"));
        assert!(refused(with(&|c| c["iss"] = json!([ISSUER])))
            .await
            .contains("malformed"));
        assert!(
            refused(with(&|c| c["aud"] = json!("http://other.test/mcp")))
                .await
                .contains("aud")
        );
        // An array with the audience in it is fine.
        assert!(oauth
            .authorize(&with(&|c| c["aud"] = json!(["x", AUDIENCE])))
            .await
            .is_ok());
        assert!(refused(with(&|c| c["exp"] = json!(now() - 3600)))
            .await
            .contains("expired"));
        // Within the leeway it still counts.
        assert!(oauth
            .authorize(&with(&|c| c["exp"] = json!(now() - 5)))
            .await
            .is_ok());
        assert!(refused(with(&|c| c["nbf"] = json!(now() + 3600)))
            .await
            .contains("not valid yet"));
        assert!(refused(with(&|c| {
            c.as_object_mut().unwrap().remove("exp");
        }))
        .await
        .contains("exp"));
        assert!(refused(with(&|c| {
            c.as_object_mut().unwrap().remove("sub");
        }))
        .await
        .contains("sub"));
        assert!(refused(with(&|c| c["sub"] = json!("")))
            .await
            .contains("sub"));

        // A signature of another key under the same kid.
        let (other, _) = ed_key("ed");
        let bad = sign(&other, Algorithm::EdDSA, Some("ed"), &claims("alice"));
        assert!(refused(bad).await.contains("signature"));
        // The header's alg must fit the key named: ES256 against the Ed25519 key.
        let mismatched = sign(&ec, Algorithm::ES256, Some("ed"), &claims("alice"));
        assert!(refused(mismatched).await.contains("alg"));
    }

    #[tokio::test]
    async fn none_hmac_and_critical_headers_are_refused() {
        let (_, ed_jwk) = ed_key("ed");
        let jwks = Jwks::new(&[&ed_jwk]);
        let oauth = server(&jwks, &[], MIN_REFRESH_INTERVAL).await;
        let c = claims("mallory");
        let none = forged(&json!({"alg": "none", "kid": "ed"}), &c, b"");
        assert!(invalid(oauth.authorize(&none).await).contains("alg none"));
        let none = forged(&json!({"alg": "None"}), &c, b"");
        assert!(invalid(oauth.authorize(&none).await).contains("alg none"));
        // HMAC with the public key as the secret: the classic confusion.
        let secret = ed_jwk["x"].as_str().unwrap().as_bytes();
        let hs = sign(
            &EncodingKey::from_secret(secret),
            Algorithm::HS256,
            Some("ed"),
            &c,
        );
        assert!(invalid(oauth.authorize(&hs).await).contains("HMAC"));
        let crit = forged(
            &json!({"alg": "EdDSA", "kid": "ed", "crit": ["exp"]}),
            &c,
            b"x",
        );
        assert!(invalid(oauth.authorize(&crit).await).contains("critical"));
        assert!(invalid(oauth.authorize("not-a-jwt").await).contains("JWT"));
        assert!(invalid(oauth.authorize(&"a.".repeat(20_000)).await).contains("long"));
    }

    #[tokio::test]
    async fn scopes_come_from_scope_or_scp() {
        let (ed, ed_jwk) = ed_key("ed");
        let jwks = Jwks::new(&[&ed_jwk]);
        let oauth = server(&jwks, &["mcp:tools"], MIN_REFRESH_INTERVAL).await;
        let token = |c: &Value| sign(&ed, Algorithm::EdDSA, Some("ed"), c);
        assert!(oauth.authorize(&token(&claims("a"))).await.is_ok());
        let mut c = claims("a");
        c["scope"] = json!("other");
        assert_eq!(
            oauth.authorize(&token(&c)).await,
            Err(TokenRefusal::InsufficientScope)
        );
        c.as_object_mut().unwrap().remove("scope");
        assert_eq!(
            oauth.authorize(&token(&c)).await,
            Err(TokenRefusal::InsufficientScope)
        );
        c["scp"] = json!(["x", "mcp:tools"]);
        assert!(oauth.authorize(&token(&c)).await.is_ok());
        c["scp"] = json!("x mcp:tools");
        assert!(oauth.authorize(&token(&c)).await.is_ok());
        assert_eq!(
            oauth.challenge(Some(&TokenRefusal::InsufficientScope)),
            "Bearer error=\"insufficient_scope\", scope=\"mcp:tools\", resource_metadata=\"http://dsh.test/.well-known/oauth-protected-resource/mcp\""
        );
    }

    #[tokio::test]
    async fn an_unknown_kid_reloads_the_keys_at_most_once_an_interval() {
        let (old, old_jwk) = ed_key("old");
        let (new, new_jwk) = ed_key("new");
        let jwks = Jwks::new(&[&old_jwk]);
        let oauth = server(&jwks, &[], Duration::from_millis(300)).await;
        assert_eq!(oauth.loads(), 1);
        assert!(oauth
            .authorize(&sign(&old, Algorithm::EdDSA, Some("old"), &claims("a")))
            .await
            .is_ok());
        assert_eq!(oauth.loads(), 1, "a known kid loads nothing");
        // The issuer rotates: the file now has the new key only.
        jwks.write(&[&new_jwk]);
        let rotated = sign(&new, Algorithm::EdDSA, Some("new"), &claims("a"));
        assert_eq!(oauth.authorize(&rotated).await.unwrap(), "oauth:a");
        assert_eq!(oauth.loads(), 2);
        // Made-up kids within the interval: no load at all.
        for n in 0..20 {
            let kid = format!("made-up-{n}");
            let token = sign(&new, Algorithm::EdDSA, Some(&kid), &claims("a"));
            assert!(invalid(oauth.authorize(&token).await).contains("kid"));
        }
        assert_eq!(oauth.loads(), 2);
        // The old key is gone from the set we hold now.
        let stale = sign(&old, Algorithm::EdDSA, Some("old"), &claims("a"));
        assert!(invalid(oauth.authorize(&stale).await).contains("kid"));
        // After the interval, the next unknown kid loads once more.
        tokio::time::sleep(Duration::from_millis(350)).await;
        assert!(oauth.authorize(&stale).await.is_err());
        assert_eq!(oauth.loads(), 3);
        // A broken file keeps the keys we had.
        std::fs::write(jwks.path(), "{").unwrap();
        tokio::time::sleep(Duration::from_millis(350)).await;
        assert!(oauth.authorize(&stale).await.is_err());
        assert_eq!(oauth.loads(), 4);
        assert!(oauth.authorize(&rotated).await.is_ok());
    }

    #[test]
    fn jwks_keep_verification_keys_only() {
        let (_, ed_jwk) = ed_key("ed");
        let document = json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
            {"kty": "EC", "crv": "P-256", "kid": "enc", "use": "enc", "x": "AA", "y": "AA"},
            {"kty": "RSA", "kid": "hs", "alg": "HS256", "n": "AQAB", "e": "AQAB"},
            {"kty": "EC", "crv": "P-521", "kid": "p521", "x": "AA", "y": "AA"},
            {"kty": "AKP", "kid": "future"},
            ed_jwk,
        ]});
        let keys = parse_jwks(document.to_string().as_bytes()).unwrap();
        let kids: Vec<_> = keys.iter().map(|k| k.kid.as_deref()).collect();
        assert_eq!(kids, [Some("ed")]);
        assert!(parse_jwks(b"{}").is_err());
    }

    #[test]
    fn where_the_metadata_is() {
        assert_eq!(
            metadata_url("https://dsh.example/mcp").unwrap(),
            "https://dsh.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8787/tools/mcp/").unwrap(),
            "http://127.0.0.1:8787/.well-known/oauth-protected-resource/tools/mcp"
        );
        assert_eq!(
            metadata_url("https://dsh.example").unwrap(),
            "https://dsh.example/.well-known/oauth-protected-resource"
        );
        assert!(metadata_url("dsh-audience").is_err());
        assert!(metadata_url("https://dsh.example/mcp?x=1").is_err());
        let issuer = Url::parse("http://as.example/tenant/").unwrap();
        assert_eq!(
            metadata_candidates(&issuer),
            [
                "http://as.example/.well-known/oauth-authorization-server/tenant",
                "http://as.example/tenant/.well-known/oauth-authorization-server",
                "http://as.example/tenant/.well-known/openid-configuration",
            ]
        );
        let issuer = Url::parse("http://as.example").unwrap();
        assert_eq!(
            metadata_candidates(&issuer),
            [
                "http://as.example/.well-known/oauth-authorization-server",
                "http://as.example/.well-known/openid-configuration",
            ]
        );
    }

    #[tokio::test]
    async fn https_needs_a_file_and_settings_are_checked() {
        let https = OAuthSettings::new(
            "https://as.example".into(),
            AUDIENCE.into(),
            AUDIENCE.into(),
            KeySource::Discover,
        );
        let err = OAuth::start(https).await.unwrap_err();
        assert!(err.0.contains("--jwks-file"), "{err}");
        let (_, jwk) = ed_key("ed");
        let jwks = Jwks::new(&[&jwk]);
        let mut settings = OAuthSettings::new(
            "https://as.example".into(),
            AUDIENCE.into(),
            AUDIENCE.into(),
            KeySource::File(jwks.path()),
        );
        assert!(OAuth::start(settings.clone()).await.is_ok());
        settings.scopes = vec!["a\"b".into()];
        assert!(OAuth::start(settings.clone()).await.is_err());
        settings.scopes = vec![];
        jwks.write(&[]);
        assert!(OAuth::start(settings)
            .await
            .unwrap_err()
            .0
            .contains("no key"));
    }

    #[test]
    fn descriptions_can_be_quoted() {
        assert_eq!(quotable("a \"b\"\\\n c"), "a b c");
    }
}
