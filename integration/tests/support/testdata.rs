//! The round-trip testdata's file names and how two decodings of one
//! object differ, for the tests that read `shared/testdata` (as JSON) and
//! `target/proto-testdata` (as the Go types write it in protobuf).

/// `<group>.<version>.<Kind>.<extension>`, group `core` meaning the legacy
/// group.
pub fn parse_name(file: &str, extension: &str) -> Option<(String, String, String)> {
    let stem = file.strip_suffix(extension)?.strip_suffix('.')?;
    let (rest, kind) = stem.rsplit_once('.')?;
    let (group, version) = rest.rsplit_once('.')?;
    let group = if group == "core" { "" } else { group };
    Some((group.to_owned(), version.to_owned(), kind.to_owned()))
}

/// Where `b` first differs from `a`, as a JSON pointer and what each holds
/// there (`/spec/x only in the first`).
pub fn first_difference(a: &serde_json::Value, b: &serde_json::Value, path: &str) -> String {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) if w == v => {}
                    Some(w) => return first_difference(v, w, &format!("{path}/{k}")),
                    None => return format!("{path}/{k} only in the first"),
                }
            }
            for k in y.keys() {
                if !x.contains_key(k) {
                    return format!("{path}/{k} only in the second: {}", y[k]);
                }
            }
            format!("{path}: objects differ")
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                if v != w {
                    return first_difference(v, w, &format!("{path}/{i}"));
                }
            }
            format!("{path}: arrays differ")
        }
        _ => format!("{path}: {a} in the first, {b} in the second"),
    }
}
