//! The one address policy of every outbound call (server-side request forgery checks).
//!
//! A URL a client or operator gave is checked when it is configured (webhook `PUT`,
//! risk-monitoring `callbackUrl`, the FIU reporting `clientUrl`, the identity upstream and list
//! download URLs of the config file) with [`resolve_checked`], and again at every call by
//! [`super::OutboundClient`], whose resolver classifies *every* address a name resolves to and
//! hands the connection exactly the checked ones.
//!
//! Classes: public addresses are always allowed; loopback and private ranges (RFC 1918, CGNAT
//! 100.64.0.0/10, IPv6 unique-local and site-local) only with `allow_private_callbacks`;
//! link-local (169.254.0.0/16, fe80::/10), cloud metadata addresses (169.254.169.254,
//! fd00:ec2::254, 100.100.100.200, 168.63.129.16), unspecified, broadcast, multicast, documentation, benchmarking
//! and reserved ranges never. IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 addresses are
//! judged by the IPv4 address they carry.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use thiserror::Error;

/// Why a URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SsrfError {
    #[error("is not a valid URL")]
    Invalid,
    #[error("must use http or https")]
    Scheme,
    #[error("must not carry a user name or password")]
    Credentials,
    #[error("has no host")]
    NoHost,
    #[error("host {0} does not resolve")]
    Unresolved(String),
    #[error("resolves to {0}, a {1} address, which is refused")]
    Refused(IpAddr, &'static str),
}

/// What kind of address an IP is, for callback purposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    Public,
    /// Loopback, private and similar internal ranges: allowed only when configured.
    Internal(&'static str),
    /// Never allowed (link-local, metadata, unspecified, multicast, reserved …).
    Forbidden(&'static str),
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    use AddressClass::*;
    let o = ip.octets();
    // AWS/GCP/Azure IMDS, Alibaba Cloud, and Azure's host endpoint (WireServer).
    if ip == Ipv4Addr::new(169, 254, 169, 254)
        || ip == Ipv4Addr::new(100, 100, 100, 200)
        || ip == Ipv4Addr::new(168, 63, 129, 16)
    {
        return Forbidden("cloud metadata");
    }
    if ip.is_unspecified() || o[0] == 0 {
        return Forbidden("unspecified");
    }
    if ip.is_link_local() {
        return Forbidden("link-local");
    }
    if ip.is_broadcast() {
        return Forbidden("broadcast");
    }
    if ip.is_multicast() {
        return Forbidden("multicast");
    }
    if o[0] >= 240 {
        return Forbidden("reserved");
    }
    if ip.is_documentation() {
        return Forbidden("documentation");
    }
    if o[0] == 192 && o[1] == 0 && o[2] == 0 {
        return Forbidden("protocol assignment");
    }
    if o[0] == 198 && (o[1] & 0xfe) == 18 {
        return Forbidden("benchmarking");
    }
    if o[0] == 192 && o[1] == 88 && o[2] == 99 {
        return Forbidden("6to4 relay anycast");
    }
    if ip.is_loopback() {
        return Internal("loopback");
    }
    if ip.is_private() {
        return Internal("private");
    }
    if o[0] == 100 && (o[1] & 0xc0) == 64 {
        return Internal("carrier-grade NAT");
    }
    Public
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    use AddressClass::*;
    let s = ip.segments();
    if ip == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254) {
        return Forbidden("cloud metadata");
    }
    if ip.is_unspecified() {
        return Forbidden("unspecified");
    }
    if ip.is_loopback() {
        return Internal("loopback");
    }
    let last32 = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and IPv4-translated
    // (::ffff:0:a.b.c.d, RFC 2765).
    if s[0..5] == [0, 0, 0, 0, 0] && (s[5] == 0xffff || s[5] == 0) {
        return classify_v4(last32());
    }
    if s[0..4] == [0, 0, 0, 0] && s[4] == 0xffff && s[5] == 0 {
        return classify_v4(last32());
    }
    // NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return classify_v4(last32());
    }
    // Local-use NAT64 (64:ff9b:1::/48, RFC 8215) may carry one at several offsets: refused.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        return Forbidden("local-use NAT64");
    }
    // Teredo (2001::/32) hides an IPv4 address (obfuscated) in its last 32 bits: refused.
    if s[0] == 0x2001 && s[1] == 0 {
        return Forbidden("Teredo tunnel");
    }
    if s[0] == 0x2001 && s[1] == 2 && s[2] == 0 {
        return Forbidden("benchmarking");
    }
    if s[0] == 0x100 && s[1..4] == [0, 0, 0] {
        return Forbidden("discard-only");
    }
    // 6to4 (2002::/16) carries one in bits 16-48.
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return classify_v4(v4);
    }
    if ip.is_multicast() {
        return Forbidden("multicast");
    }
    if (s[0] & 0xffc0) == 0xfe80 {
        return Forbidden("link-local");
    }
    // 2001:db8::/32 and, since RFC 9637, 3fff::/20.
    if (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] == 0x3fff && (s[1] & 0xf000) == 0) {
        return Forbidden("documentation");
    }
    if (s[0] & 0xfe00) == 0xfc00 {
        return Internal("unique-local");
    }
    if (s[0] & 0xffc0) == 0xfec0 {
        return Internal("site-local");
    }
    Public
}

/// Classifies one address.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// Whether `ip` may be called; `Err` names its class.
pub fn check_address(ip: IpAddr, allow_private: bool) -> Result<(), SsrfError> {
    match classify(ip) {
        AddressClass::Public => Ok(()),
        AddressClass::Internal(_) if allow_private => Ok(()),
        AddressClass::Internal(class) | AddressClass::Forbidden(class) => {
            Err(SsrfError::Refused(ip, class))
        }
    }
}

/// Parses a URL and checks its form: http(s), no credentials, a host. Addresses are checked
/// by [`check_url`] and [`resolve_checked`].
pub fn parse_url(raw: &str) -> Result<url::Url, SsrfError> {
    let url = url::Url::parse(raw.trim()).map_err(|_| SsrfError::Invalid)?;
    check_form(&url)?;
    Ok(url)
}

fn check_form(url: &url::Url) -> Result<(), SsrfError> {
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(SsrfError::Scheme);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(SsrfError::Credentials);
    }
    if url.host().is_none() {
        return Err(SsrfError::NoHost);
    }
    Ok(())
}

/// A URL whose every address passed the check: connect only to `addrs`.
#[derive(Debug, Clone)]
pub struct CheckedUrl {
    pub url: url::Url,
    /// The host name as in the URL (without brackets), for the `resolve` override.
    pub host: String,
    pub addrs: Vec<SocketAddr>,
}

/// Checks a parsed URL's form as [`parse_url`] does, and a literal address's class (a name is
/// checked when it is resolved).
pub fn check_url(url: &url::Url, allow_private: bool) -> Result<(), SsrfError> {
    check_form(url)?;
    match url.host() {
        Some(url::Host::Ipv4(ip)) => check_address(ip.into(), allow_private),
        Some(url::Host::Ipv6(ip)) => check_address(ip.into(), allow_private),
        Some(url::Host::Domain(_)) | None => Ok(()),
    }
}

/// Resolves a host name and checks every address it resolves to; answers them all.
pub async fn resolve_host(
    name: &str,
    port: u16,
    allow_private: bool,
) -> Result<Vec<SocketAddr>, SsrfError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
        .await
        .map_err(|_| SsrfError::Unresolved(name.to_owned()))?
        .collect();
    if addrs.is_empty() {
        return Err(SsrfError::Unresolved(name.to_owned()));
    }
    for addr in &addrs {
        check_address(addr.ip(), allow_private)?;
    }
    Ok(addrs)
}

/// Resolves `raw`'s host and checks every address it resolves to (a literal address is the
/// one it names).
pub async fn resolve_checked(raw: &str, allow_private: bool) -> Result<CheckedUrl, SsrfError> {
    let url = parse_url(raw)?;
    check_url(&url, allow_private)?;
    let port = url.port_or_known_default().ok_or(SsrfError::NoHost)?;
    let (host, addrs) = match url.host() {
        None => return Err(SsrfError::NoHost),
        Some(url::Host::Ipv4(ip)) => (ip.to_string(), vec![SocketAddr::new(ip.into(), port)]),
        Some(url::Host::Ipv6(ip)) => (ip.to_string(), vec![SocketAddr::new(ip.into(), port)]),
        Some(url::Host::Domain(name)) => (
            name.to_owned(),
            resolve_host(name, port, allow_private).await?,
        ),
    };
    Ok(CheckedUrl { url, host, addrs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(ip: &str) -> AddressClass {
        classify(ip.parse().expect("an address"))
    }

    #[test]
    fn public_addresses_are_allowed_without_configuration() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "100.128.0.1",
            "3ffe::1",
            "2001:4860:4860::8888",
        ] {
            assert_eq!(class(ip), AddressClass::Public, "{ip}");
            assert!(
                check_address(ip.parse().expect("ip"), false).is_ok(),
                "{ip}"
            );
        }
    }

    #[test]
    fn loopback_private_cgnat_and_unique_local_need_allow_private_callbacks() {
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.254",
            "::1",
            "fd12:3456::1",
            "fc00::1",
            "fec0::1",
            "::ffff:10.0.0.1",
            "::ffff:127.0.0.1",
        ] {
            assert!(matches!(class(ip), AddressClass::Internal(_)), "{ip}");
            assert!(
                check_address(ip.parse().expect("ip"), false).is_err(),
                "{ip}"
            );
            assert!(check_address(ip.parse().expect("ip"), true).is_ok(), "{ip}");
        }
    }

    #[test]
    fn link_local_metadata_and_special_addresses_are_refused_even_when_private_is_allowed() {
        for ip in [
            "169.254.169.254",
            "169.254.1.1",
            "100.100.100.200",
            "fd00:ec2::254",
            "fe80::1",
            "0.0.0.0",
            "0.1.2.3",
            "::",
            "255.255.255.255",
            "224.0.0.1",
            "ff02::1",
            "240.0.0.1",
            "192.0.2.10",
            "198.18.0.1",
            "192.0.0.170",
            "2001:db8::1",
            "3fff::1",
            "3fff:fff:ffff::1",
            "168.63.129.16",
            "::ffff:0:a9fe:a9fe",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "64:ff9b:1::a9fe:a9fe",
            "100::1",
            "2001:2::1",
            "192.88.99.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
        ] {
            assert!(matches!(class(ip), AddressClass::Forbidden(_)), "{ip}");
            assert!(
                check_address(ip.parse().expect("ip"), true).is_err(),
                "{ip}"
            );
        }
    }

    #[test]
    fn embedded_ipv4_addresses_are_judged_by_the_address_they_carry() {
        assert_eq!(class("::ffff:8.8.8.8"), AddressClass::Public);
        assert_eq!(class("64:ff9b::808:808"), AddressClass::Public);
        assert!(matches!(
            class("2002:0a00:0001::1"),
            AddressClass::Internal("private")
        ));
    }

    #[test]
    fn urls_other_than_plain_http_and_https_are_refused() {
        assert_eq!(parse_url("ftp://example.com/x"), Err(SsrfError::Scheme));
        assert_eq!(parse_url("not a url"), Err(SsrfError::Invalid));
        assert_eq!(
            parse_url("https://user:pw@example.com/"),
            Err(SsrfError::Credentials)
        );
        assert!(parse_url("https://hooks.example.com/vigil").is_ok());
    }

    #[tokio::test]
    async fn resolution_checks_the_address_of_literal_and_named_hosts() {
        let refused = resolve_checked("http://169.254.169.254/latest/meta-data", true)
            .await
            .expect_err("metadata refused");
        assert!(matches!(refused, SsrfError::Refused(_, "cloud metadata")));
        let refused = resolve_checked("http://localhost:9/hook", false)
            .await
            .expect_err("loopback name refused without the setting");
        assert!(matches!(refused, SsrfError::Refused(_, "loopback")));
        let allowed = resolve_checked("http://localhost:9/hook", true)
            .await
            .expect("loopback name allowed with the setting");
        assert!(allowed.addrs.iter().all(|a| a.ip().is_loopback()));
        assert_eq!(allowed.host, "localhost");
        let allowed = resolve_checked("http://[::1]:9/hook", true)
            .await
            .expect("v6 literal");
        assert_eq!(allowed.addrs[0].port(), 9);
    }
}
