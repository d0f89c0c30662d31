//! Turning a context of a [`Kubeconfig`] into a [`Config`]: client-go's
//! `ClientConfig` checks and defaults.

use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::super::proxy::redact_url;
use super::super::{Auth, CertificateFiles, Config, Error, Impersonate, Proxy, ProxyUrl, Secret};
use super::{AuthInfo, Kubeconfig, KubeconfigOptions};

/// client-go's `DefaultServerURL`: a URL with scheme and host, or a
/// `host:port` pair (optionally ending in `/`) given `default_tls`'s scheme.
/// A path after a scheme-less `host:port` is refused, as there:
/// `anything.com:8080/foo/bar` reads as a URL of scheme `anything.com`
/// without host, and with `http://` in front it has a path. Only http and
/// https can be spoken to, and a port must be a number that fits (Go would
/// fail on dialing; `http::Uri` accepts any text there). Trailing slashes
/// of the path are dropped: requests append their own paths to it.
pub(in crate::config) fn server_url(host: &str, default_tls: bool) -> Result<http::Uri, String> {
    let refused = || format!("host must be a URL or a host:port pair: {host:?}");
    if host.is_empty() {
        return Err("host must be a URL or a host:port pair".into());
    }
    let full =
        host.parse::<http::Uri>().ok().filter(|u| u.scheme().is_some() && u.host().is_some_and(|h| !h.is_empty()));
    let url = match full {
        Some(url) => url,
        None => {
            let scheme = if default_tls { "https" } else { "http" };
            let url: http::Uri = format!("{scheme}://{host}").parse().map_err(|_| refused())?;
            if url.host().is_none_or(str::is_empty) || !matches!(url.path(), "" | "/") || url.query().is_some() {
                return Err(refused());
            }
            url
        }
    };
    match url.scheme_str() {
        Some("https" | "http") => {}
        other => {
            return Err(format!(
                "server URL {host:?}: unsupported scheme {:?}, must be https or http",
                other.unwrap_or_default()
            ));
        }
    }
    let authority = url.authority().map(|a| a.as_str()).unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    if let Some((_, port)) = host_port.rsplit_once(':').filter(|_| !host_port.ends_with(']'))
        && !port.is_empty()
        && port.parse::<u16>().is_err()
    {
        return Err(format!("server URL {host:?}: invalid port {port:?}"));
    }
    let path = url.path();
    if path.len() > 1 && path.ends_with('/') {
        let mut trimmed = match path.trim_end_matches('/') {
            "" => "/".to_owned(),
            kept => kept.to_owned(),
        };
        if let Some(query) = url.query() {
            trimmed = format!("{trimmed}?{query}");
        }
        let mut parts = url.into_parts();
        parts.path_and_query = Some(trimmed.parse().map_err(|_| refused())?);
        return http::Uri::from_parts(parts).map_err(|_| refused());
    }
    Ok(url)
}

/// The checks of client-go's `validateAuthInfo` that concern what a user
/// entry means (file existence is checked when the files are read).
fn validate_user(user: &AuthInfo) -> Result<(), String> {
    let has_token = user.token.as_ref().is_some_and(|t| !t.is_empty());
    let has_basic = user.username.as_deref().is_some_and(|u| !u.is_empty())
        || user.password.as_ref().is_some_and(|p| !p.is_empty());
    if has_token && has_basic {
        return Err("more than one authentication method found; found [token basicAuth], only one is allowed".into());
    }
    if let Some(exec) = &user.exec {
        if user.auth_provider.is_some() {
            return Err("authProvider cannot be provided in combination with an exec plugin".into());
        }
        if exec.command.is_empty() {
            return Err("exec plugin has no command (command must be specified)".into());
        }
        if exec.api_version.as_deref().is_none_or(str::is_empty) {
            return Err("apiVersion must be specified to use exec authentication plugin".into());
        }
        if exec.env.iter().any(|v| v.name.is_empty()) {
            return Err("env variable name must be specified to use exec authentication plugin".into());
        }
        // A missing mode is IfAvailable, as the v1 file format defaults it.
        if let Some(mode) =
            exec.interactive_mode.as_deref().filter(|m| !matches!(*m, "" | "Never" | "IfAvailable" | "Always"))
        {
            return Err(format!("invalid interactiveMode: {mode:?}"));
        }
    }
    let no_user = user.impersonate.as_deref().is_none_or(str::is_empty);
    if no_user
        && (user.impersonate_uid.as_deref().is_some_and(|u| !u.is_empty())
            || !user.impersonate_groups.is_empty()
            || !user.impersonate_user_extra.is_empty())
    {
        return Err("requesting uid, groups or user-extra without impersonating a user".into());
    }
    Ok(())
}

fn decode_b64(origin: &str, field: &'static str, data: &str) -> Result<Vec<u8>, Error> {
    let cleaned: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(cleaned).map_err(|source| Error::Base64 {
        origin: origin.to_owned(),
        field,
        source,
    })
}

fn read_file(what: &'static str, path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::ReadFile { what, path: path.to_owned(), source })
}

impl Config {
    /// The configuration of a context of `kc` (`options.context`, else
    /// `current-context`).
    pub fn from_kubeconfig(kc: &Kubeconfig, options: &KubeconfigOptions) -> Result<Config, Error> {
        let origin = kc.origin_display();
        let context_name = options
            .context
            .as_deref()
            .or(kc.current_context.as_deref())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| kc.invalid("no current-context is set and no context was given".into()))?;
        let context = kc
            .contexts
            .iter()
            .find(|c| c.name == context_name)
            .ok_or_else(|| kc.invalid(format!("context {context_name:?} not found")))?
            .context
            .clone()
            .unwrap_or_default();
        let cluster_name = options.cluster.as_deref().unwrap_or(&context.cluster);
        let cluster = kc
            .clusters
            .iter()
            .find(|c| c.name == cluster_name)
            .ok_or_else(|| kc.invalid(format!("cluster {cluster_name:?} of context {context_name:?} not found")))?
            .cluster
            .clone()
            .unwrap_or_default();
        let user_name = options.user.as_deref().unwrap_or(&context.user);
        let user = match kc.auth_infos.iter().find(|a| a.name == user_name) {
            Some(a) => a.auth_info.clone().unwrap_or_default(),
            None if user_name.is_empty() => AuthInfo::default(),
            None => return Err(kc.invalid(format!("user {user_name:?} of context {context_name:?} not found"))),
        };

        let server = cluster
            .server
            .as_deref()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| kc.invalid(format!("no server found for cluster {cluster_name:?}")))?;
        let has_ca = cluster.certificate_authority_data.as_deref().is_some_and(|d| !d.is_empty())
            || cluster.certificate_authority.is_some();
        // client-go's defaultServerUrlFor: a scheme-less `host:port` means
        // https when any TLS setting is present, http otherwise.
        let has_cert =
            user.client_certificate_data.as_deref().is_some_and(|d| !d.is_empty()) || user.client_certificate.is_some();
        let default_tls = has_ca || has_cert || cluster.insecure_skip_tls_verify == Some(true);
        let cluster_url =
            server_url(server, default_tls).map_err(|m| kc.invalid(format!("cluster {cluster_name:?}: {m}")))?;

        let mut config = Config::new(cluster_url);
        config.default_namespace = options
            .namespace
            .clone()
            .or(context.namespace)
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".into());
        if let Some(proxy) = cluster.proxy_url.as_deref().filter(|p| !p.is_empty()) {
            // Set, it wins over the environment, as in kubectl.
            let url = ProxyUrl::parse(proxy).map_err(|m| {
                let shown = redact_url(proxy);
                kc.invalid(format!("invalid 'proxy-url' {shown:?} for cluster {cluster_name:?}: {m}"))
            })?;
            config.proxy = Proxy::Url(url);
        }
        if cluster.insecure_skip_tls_verify == Some(true) && has_ca {
            // kubectl refuses this combination too: one of them is a mistake.
            return Err(kc.invalid(format!(
                "cluster {cluster_name:?}: certificate-authority and insecure-skip-tls-verify cannot both be set"
            )));
        }
        config.tls_server_name = cluster.tls_server_name.filter(|n| !n.is_empty());
        config.insecure_skip_tls_verify = cluster.insecure_skip_tls_verify.unwrap_or(false);
        config.disable_compression = cluster.disable_compression.unwrap_or(false);
        config.root_ca_pem = match (&cluster.certificate_authority_data, &cluster.certificate_authority) {
            (Some(data), _) if !data.is_empty() => Some(decode_b64(&origin, "certificate-authority-data", data)?),
            (_, Some(path)) => Some(read_file("certificate-authority", path)?),
            _ => None,
        };
        config.client_cert_pem = match (&user.client_certificate_data, &user.client_certificate) {
            (Some(data), _) if !data.is_empty() => Some(decode_b64(&origin, "client-certificate-data", data)?),
            (_, Some(path)) => Some(read_file("client-certificate", path)?),
            _ => None,
        };
        let key = match (&user.client_key_data, &user.client_key) {
            (Some(data), _) if !data.is_empty() => Some(decode_b64(&origin, "client-key-data", data.expose())?),
            (_, Some(path)) => Some(read_file("client-key", path)?),
            _ => None,
        };
        // What was read from files is read again when it changes; inline
        // data wins over a file, as above.
        let from_file =
            |data: Option<&str>, path: &Option<PathBuf>| path.clone().filter(|_| data.is_none_or(str::is_empty));
        config.certificate_files = CertificateFiles {
            certificate_authority: from_file(
                cluster.certificate_authority_data.as_deref(),
                &cluster.certificate_authority,
            ),
            client_certificate: from_file(user.client_certificate_data.as_deref(), &user.client_certificate),
            client_key: from_file(user.client_key_data.as_ref().map(Secret::expose), &user.client_key),
        };
        config.client_key_pem = key
            .map(|k| String::from_utf8(k).map(Secret::new))
            .transpose()
            .map_err(|_| kc.invalid(format!("user {user_name:?}: client key is not PEM text")))?;
        if config.client_cert_pem.is_some() != config.client_key_pem.is_some() {
            return Err(kc.invalid(format!("user {user_name:?}: client certificate and key must be given together")));
        }

        validate_user(&user).map_err(|m| kc.invalid(format!("user {user_name:?}: {m}")))?;
        config.auth = if let Some(path) = user.token_file.clone().filter(|p| !p.as_os_str().is_empty()) {
            Auth::TokenFile(path)
        } else if let Some(token) = user.token.clone().filter(|t| !t.is_empty()) {
            Auth::Bearer(token)
        } else if let Some(username) = user.username.clone().filter(|u| !u.is_empty()) {
            Auth::Basic { username, password: user.password.clone().unwrap_or_default() }
        } else if let Some(exec) = user.exec.clone() {
            if exec.command.is_empty() {
                return Err(kc.invalid(format!("user {user_name:?}: exec plugin has no command")));
            }
            Auth::Exec(Box::new(exec))
        } else if user.auth_provider.is_some() {
            return Err(kc.invalid(format!(
                "user {user_name:?}: auth-provider plugins are not supported; use an exec credential plugin"
            )));
        } else {
            Auth::None
        };
        config.impersonate = Impersonate {
            user: user.impersonate.filter(|u| !u.is_empty()),
            uid: user.impersonate_uid.filter(|u| !u.is_empty()),
            groups: user.impersonate_groups,
            extra: user.impersonate_user_extra,
        };
        Ok(config)
    }
}
