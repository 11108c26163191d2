//! Where the export goes: the standard `OTEL_*` variables and the settings'
//! `telemetry` section, resolved into a [`TelemetryConfig`] without
//! touching the network.

use dsh_policy::TelemetrySettings;
use std::fmt;

/// The service name when neither `OTEL_SERVICE_NAME` nor the settings name one.
pub const DEFAULT_SERVICE_NAME: &str = "dsh";

/// What the exporter is started with: resolved, checked, ready to use.
///
/// Build it with [`TelemetryConfig::from_env_and_settings`]; every field is
/// public so a host (or a test) can also write one by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// Where spans go (a full URL, e.g. `http://localhost:4318/v1/traces`);
    /// `None`: no spans are exported.
    pub traces_endpoint: Option<String>,
    /// Where metrics go (`…/v1/metrics`); `None`: no metrics are exported.
    pub metrics_endpoint: Option<String>,
    /// Headers sent with every export, in order (the settings' first, then
    /// `OTEL_EXPORTER_OTLP_HEADERS`, which wins a name both set).
    pub headers: Vec<(String, String)>,
    /// The `service.name` resource attribute.
    pub service_name: String,
    /// More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`).
    pub resource_attributes: Vec<(String, String)>,
    /// Whether a call's command text is exported (`dsh.tool.command`).
    pub log_commands: bool,
}

/// Why the telemetry settings cannot be used. The message names the
/// variable or key, never a header's value (it may be a secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryError {
    kind: TelemetryErrorKind,
    key: String,
    message: String,
}

/// What kind of [`TelemetryError`] it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TelemetryErrorKind {
    /// A value is malformed (an endpoint that is no URL, a header list
    /// that does not parse).
    Invalid,
    /// A valid value this build does not support (the `grpc` protocol, an
    /// `https://` endpoint).
    Unsupported,
    /// The exporter could not be started.
    Start,
    /// The last exports did not finish before the deadline, or failed.
    Shutdown,
}

impl TelemetryError {
    pub(crate) fn new(
        kind: TelemetryErrorKind,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        TelemetryError {
            kind,
            key: key.into(),
            message: message.into(),
        }
    }

    /// What kind of error it is.
    pub fn kind(&self) -> TelemetryErrorKind {
        self.kind
    }

    /// The variable or settings key at fault (`OTEL_EXPORTER_OTLP_PROTOCOL`,
    /// `telemetry.otlpEndpoint`), or what failed.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// What is wrong and what to do about it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for TelemetryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "telemetry: {}: {}", self.key, self.message)
    }
}

impl std::error::Error for TelemetryError {}

fn invalid(key: &str, message: impl Into<String>) -> TelemetryError {
    TelemetryError::new(TelemetryErrorKind::Invalid, key, message)
}

fn unsupported(key: &str, message: impl Into<String>) -> TelemetryError {
    TelemetryError::new(TelemetryErrorKind::Unsupported, key, message)
}

impl TelemetryConfig {
    /// The export the environment and the settings ask for, or `None` when
    /// they ask for none (the default).
    ///
    /// `env` looks a variable up (`|k| std::env::var(k).ok()` in a host; a
    /// map in a test). The rules, in order:
    ///
    /// - `OTEL_SDK_DISABLED=true` turns everything off, whatever else says.
    /// - Spans go to `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else to
    ///   the base endpoint plus `/v1/traces`; metrics likewise with
    ///   `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` and `/v1/metrics`. The base
    ///   endpoint is `OTEL_EXPORTER_OTLP_ENDPOINT`, else the settings'
    ///   `telemetry.otlpEndpoint`. With none of these set, nothing is on.
    /// - `OTEL_TRACES_EXPORTER=none` / `OTEL_METRICS_EXPORTER=none` turn one
    ///   signal off; `otlp` (or unset) keeps it.
    /// - `OTEL_EXPORTER_OTLP_PROTOCOL` (and the per-signal
    ///   `…_TRACES_PROTOCOL`, `…_METRICS_PROTOCOL`) must be `http/protobuf`
    ///   when set.
    /// - Headers: `telemetry.otlpHeaders`, then `OTEL_EXPORTER_OTLP_HEADERS`
    ///   (`name=value,name2=value2`, values percent-decoded).
    /// - `service.name`: `OTEL_SERVICE_NAME`, else `telemetry.serviceName`,
    ///   else a `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, else `dsh`.
    /// - The command text only with `telemetry.logCommands: true`.
    ///
    /// # Errors
    /// [`TelemetryErrorKind::Unsupported`] for the `grpc` or `http/json`
    /// protocol and an `https://` endpoint (this build speaks OTLP over plain
    /// HTTP: send to a local collector, which forwards over TLS);
    /// [`TelemetryErrorKind::Invalid`] for an endpoint that is no `http://`
    /// URL, an unknown exporter name, or a header or attribute list that
    /// does not parse. A host should report it, and either go on without
    /// telemetry or refuse to start.
    pub fn from_env_and_settings(
        env: impl Fn(&str) -> Option<String>,
        settings: &TelemetrySettings,
    ) -> Result<Option<TelemetryConfig>, TelemetryError> {
        let var = |name: &str| {
            env(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let base = match var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            Some(url) => Some(("OTEL_EXPORTER_OTLP_ENDPOINT", url)),
            None => settings
                .otlp_endpoint
                .clone()
                .map(|url| ("telemetry.otlpEndpoint", url)),
        };
        let mut endpoints = [None, None];
        for (i, (signal, path)) in [("TRACES", "/v1/traces"), ("METRICS", "/v1/metrics")]
            .into_iter()
            .enumerate()
        {
            let exporter_var = format!("OTEL_{signal}_EXPORTER");
            match var(&exporter_var).as_deref() {
                None | Some("otlp") => {}
                Some("none") => continue,
                Some(other) => {
                    return Err(invalid(
                        &exporter_var,
                        format!("{other:?} is not supported; use \"otlp\" or \"none\""),
                    ))
                }
            }
            let signal_var = format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT");
            let endpoint = match var(&signal_var) {
                Some(url) => Some((signal_var, url)),
                None => base.as_ref().map(|(key, url)| {
                    (
                        (*key).to_owned(),
                        format!("{}{path}", url.trim_end_matches('/')),
                    )
                }),
            };
            let Some((key, url)) = endpoint else {
                continue;
            };
            check_url(&key, &url)?;
            let protocol_var = format!("OTEL_EXPORTER_OTLP_{signal}_PROTOCOL");
            for key in [protocol_var.as_str(), "OTEL_EXPORTER_OTLP_PROTOCOL"] {
                if let Some(protocol) = var(key) {
                    check_protocol(key, &protocol)?;
                    break;
                }
            }
            endpoints[i] = Some(url);
        }
        let [traces_endpoint, metrics_endpoint] = endpoints;
        if traces_endpoint.is_none() && metrics_endpoint.is_none() {
            return Ok(None);
        }
        let mut headers: Vec<(String, String)> = settings
            .otlp_headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(list) = var("OTEL_EXPORTER_OTLP_HEADERS") {
            for (name, value) in parse_key_values("OTEL_EXPORTER_OTLP_HEADERS", &list)? {
                headers.retain(|(k, _)| !k.eq_ignore_ascii_case(&name));
                headers.push((name, value));
            }
        }
        let resource_attributes = match var("OTEL_RESOURCE_ATTRIBUTES") {
            Some(list) => parse_key_values("OTEL_RESOURCE_ATTRIBUTES", &list)?,
            None => Vec::new(),
        };
        let service_name = var("OTEL_SERVICE_NAME")
            .or_else(|| settings.service_name.clone())
            .or_else(|| {
                resource_attributes
                    .iter()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_owned());
        Ok(Some(TelemetryConfig {
            traces_endpoint,
            metrics_endpoint,
            headers,
            service_name,
            resource_attributes,
            log_commands: settings.log_commands.unwrap_or(false),
        }))
    }
}

fn check_url(key: &str, url: &str) -> Result<(), TelemetryError> {
    if url.starts_with("https://") {
        return Err(unsupported(
            key,
            format!("{url}: this build sends OTLP over plain HTTP only (no TLS in the exporter); point it at a local collector (http://localhost:4318) that forwards over TLS"),
        ));
    }
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        invalid(
            key,
            format!("{url:?}: must be an http:// URL such as http://localhost:4318"),
        )
    })?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(invalid(key, format!("{url:?}: no host")));
    }
    Ok(())
}

fn check_protocol(key: &str, protocol: &str) -> Result<(), TelemetryError> {
    match protocol {
        "http/protobuf" => Ok(()),
        "grpc" => Err(unsupported(
            key,
            "\"grpc\" is not supported by this build; set it to \"http/protobuf\" and use the collector's OTLP/HTTP port (4318)",
        )),
        "http/json" => Err(unsupported(
            key,
            "\"http/json\" is not supported by this build; set it to \"http/protobuf\"",
        )),
        other => Err(invalid(
            key,
            format!("{other:?} is not an OTLP protocol; use \"http/protobuf\""),
        )),
    }
}

/// Parses the W3C-baggage-like lists of `OTEL_EXPORTER_OTLP_HEADERS` and
/// `OTEL_RESOURCE_ATTRIBUTES`: `k=v` entries separated by commas, values
/// percent-decoded, blanks around entries ignored. The error names the
/// entry by position, not by value.
pub(crate) fn parse_key_values(
    key: &str,
    list: &str,
) -> Result<Vec<(String, String)>, TelemetryError> {
    let mut out = Vec::new();
    for (i, entry) in list.split(',').enumerate() {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let Some((name, value)) = entry.split_once('=') else {
            return Err(invalid(key, format!("entry {} has no '='", i + 1)));
        };
        let name = percent_decode(name.trim())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| invalid(key, format!("entry {} has no valid name", i + 1)))?;
        let value = percent_decode(value.trim())
            .ok_or_else(|| invalid(key, format!("entry {} has a malformed value", i + 1)))?;
        out.push((name, value));
    }
    Ok(out)
}

/// `%XX` escapes decoded; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn resolve(
        vars: &[(&str, &str)],
        settings: &TelemetrySettings,
    ) -> Result<Option<TelemetryConfig>, TelemetryError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        TelemetryConfig::from_env_and_settings(|k| vars.get(k).cloned(), settings)
    }

    fn on(vars: &[(&str, &str)]) -> TelemetryConfig {
        resolve(vars, &TelemetrySettings::default())
            .expect("valid")
            .expect("on")
    }

    #[test]
    fn off_by_default() {
        assert_eq!(resolve(&[], &TelemetrySettings::default()), Ok(None));
        // Unrelated OTEL variables turn nothing on.
        assert_eq!(
            resolve(
                &[
                    ("OTEL_SERVICE_NAME", "x"),
                    ("OTEL_EXPORTER_OTLP_HEADERS", "a=b")
                ],
                &TelemetrySettings::default()
            ),
            Ok(None)
        );
        // An empty endpoint is no endpoint.
        assert_eq!(
            resolve(
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "  ")],
                &TelemetrySettings::default()
            ),
            Ok(None)
        );
    }

    #[test]
    fn the_base_endpoint_turns_both_signals_on() {
        let c = on(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")]);
        assert_eq!(
            c.traces_endpoint.as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(
            c.metrics_endpoint.as_deref(),
            Some("http://collector:4318/v1/metrics")
        );
        assert_eq!(c.service_name, "dsh");
        assert!(!c.log_commands);
        assert!(c.headers.is_empty());
    }

    #[test]
    fn signal_endpoints_are_taken_as_they_are() {
        let c = on(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom")]);
        assert_eq!(c.traces_endpoint.as_deref(), Some("http://t:1/custom"));
        assert_eq!(c.metrics_endpoint, None);
        let c = on(&[("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:2/x")]);
        assert_eq!(c.traces_endpoint, None);
        assert_eq!(c.metrics_endpoint.as_deref(), Some("http://m:2/x"));
        let c = on(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/v1/traces"),
        ]);
        assert_eq!(c.traces_endpoint.as_deref(), Some("http://t:1/v1/traces"));
        assert_eq!(
            c.metrics_endpoint.as_deref(),
            Some("http://base:4318/v1/metrics")
        );
    }

    #[test]
    fn disabled_and_none_exporters() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        let settings = TelemetrySettings {
            otlp_endpoint: Some("http://s:4318".into()),
            ..Default::default()
        };
        assert_eq!(
            resolve(&[base, ("OTEL_SDK_DISABLED", "TRUE")], &settings),
            Ok(None)
        );
        let c = on(&[base, ("OTEL_TRACES_EXPORTER", "none")]);
        assert_eq!(c.traces_endpoint, None);
        assert!(c.metrics_endpoint.is_some());
        assert_eq!(
            resolve(
                &[
                    base,
                    ("OTEL_TRACES_EXPORTER", "none"),
                    ("OTEL_METRICS_EXPORTER", "none")
                ],
                &settings
            ),
            Ok(None)
        );
        let e = resolve(&[base, ("OTEL_TRACES_EXPORTER", "zipkin")], &settings).unwrap_err();
        assert_eq!(e.key(), "OTEL_TRACES_EXPORTER");
    }

    #[test]
    fn settings_turn_it_on_and_the_environment_wins() {
        let settings = TelemetrySettings {
            otlp_endpoint: Some("http://from-settings:4318".into()),
            otlp_headers: [("x-team".to_owned(), "dev".to_owned())].into(),
            service_name: Some("agent-a".into()),
            log_commands: Some(true),
        };
        let c = resolve(&[], &settings).unwrap().unwrap();
        assert_eq!(
            c.traces_endpoint.as_deref(),
            Some("http://from-settings:4318/v1/traces")
        );
        assert_eq!(c.headers, vec![("x-team".into(), "dev".into())]);
        assert_eq!(c.service_name, "agent-a");
        assert!(c.log_commands);

        let c = resolve(
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://from-env:4318"),
                ("OTEL_SERVICE_NAME", "from-env"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "X-Team=ops"),
            ],
            &settings,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            c.metrics_endpoint.as_deref(),
            Some("http://from-env:4318/v1/metrics")
        );
        assert_eq!(c.service_name, "from-env");
        assert_eq!(c.headers, vec![("X-Team".into(), "ops".into())]);
    }

    #[test]
    fn protocols_other_than_http_protobuf_are_refused() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        on(&[base, ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")]);
        let e = resolve(
            &[base, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            &TelemetrySettings::default(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), TelemetryErrorKind::Unsupported);
        assert_eq!(e.key(), "OTEL_EXPORTER_OTLP_PROTOCOL");
        assert!(e.message().contains("http/protobuf"), "{e}");
        assert!(e.to_string().contains("grpc"), "{e}");
        // The per-signal variable is read first.
        let e = resolve(
            &[
                base,
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc"),
            ],
            &TelemetrySettings::default(),
        )
        .unwrap_err();
        assert_eq!(e.key(), "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL");
        for (protocol, kind) in [
            ("http/json", TelemetryErrorKind::Unsupported),
            ("carrier-pigeon", TelemetryErrorKind::Invalid),
        ] {
            let e = resolve(
                &[base, ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)],
                &TelemetrySettings::default(),
            )
            .unwrap_err();
            assert_eq!(e.kind(), kind, "{protocol}");
        }
    }

    #[test]
    fn endpoints_must_be_plain_http_urls() {
        for (url, kind) in [
            ("https://otel.example:4318", TelemetryErrorKind::Unsupported),
            ("localhost:4318", TelemetryErrorKind::Invalid),
            ("http://", TelemetryErrorKind::Invalid),
        ] {
            let e = resolve(
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", url)],
                &TelemetrySettings::default(),
            )
            .unwrap_err();
            assert_eq!(e.kind(), kind, "{url}");
            assert_eq!(e.key(), "OTEL_EXPORTER_OTLP_ENDPOINT");
        }
        let settings = TelemetrySettings {
            otlp_endpoint: Some("https://x:4318".into()),
            ..Default::default()
        };
        let e = resolve(&[], &settings).unwrap_err();
        assert_eq!(e.key(), "telemetry.otlpEndpoint");
    }

    #[test]
    fn headers_are_parsed_and_decoded() {
        let c = on(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                " api-key=secret%3D%3D , x-tenant = a%20b ,,",
            ),
        ]);
        assert_eq!(
            c.headers,
            vec![
                ("api-key".into(), "secret==".into()),
                ("x-tenant".into(), "a b".into())
            ]
        );
        for bad in ["novalue", "=v", "k=%zz", "k=%4"] {
            let e = resolve(
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                    ("OTEL_EXPORTER_OTLP_HEADERS", bad),
                ],
                &TelemetrySettings::default(),
            )
            .unwrap_err();
            assert_eq!(e.key(), "OTEL_EXPORTER_OTLP_HEADERS", "{bad}");
            // The value, maybe a secret, is never echoed.
            assert!(!e.to_string().contains(bad), "{e}");
        }
    }

    #[test]
    fn resource_attributes_and_the_service_name() {
        let c = on(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=from-attrs,deployment.environment=dev",
            ),
        ]);
        assert_eq!(c.service_name, "from-attrs");
        assert_eq!(
            c.resource_attributes[1],
            ("deployment.environment".into(), "dev".into())
        );
    }
}
