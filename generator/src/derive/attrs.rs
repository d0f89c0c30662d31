//! The attributes of the derives: `#[resource(...)]` on a spec struct,
//! `#[schema(...)]` on a struct, an enum, a field or a variant. Each
//! error names the attribute and points at it.

use serde_json::Value;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Error, LitBool, LitStr, Result};

use crate::ir::{Keywords, ListType, MapType};

/// `#[resource(...)]`: what makes the spec's kind.
#[derive(Debug, Default)]
pub struct ResourceAttrs {
    /// `group = "example.com"`.
    pub group: Option<String>,
    /// `version = "v1"`.
    pub version: Option<String>,
    /// `kind = "Greeting"`.
    pub kind: Option<String>,
    /// `namespaced`: else cluster-scoped.
    pub namespaced: bool,
    /// `status = "GreetingStatus"`: the type of `status`, a path.
    pub status: Option<(String, proc_macro2::Span)>,
    /// `plural = "greetings"`; else the kind's, lowercased, in English.
    pub plural: Option<String>,
    /// `singular = "greeting"`; else the kind, lowercased.
    pub singular: Option<String>,
    /// `shortname = "gr"`, any number of times.
    pub short_names: Vec<String>,
    /// `category = "all"`, any number of times.
    pub categories: Vec<String>,
    /// `printcolumn(name = "...", type_ = "...", json_path = "...", ...)`.
    pub printer_columns: Vec<Value>,
    /// `selectable = ".spec.color"`, any number of times.
    pub selectable_fields: Vec<String>,
    /// `scale(spec_replicas_path = "...", status_replicas_path = "...",
    /// label_selector_path = "...")`: the scale subresource.
    pub scale: Option<Value>,
    /// `deprecated` or `deprecated = "warning"`.
    pub deprecated: bool,
    /// The warning of `deprecated = "warning"`.
    pub deprecation_warning: Option<String>,
    /// `served = false`: the version is defined but not served.
    pub served: Option<bool>,
}

/// `#[schema(...)]` on a field, a struct, an enum or a variant.
#[derive(Debug, Default)]
pub struct SchemaAttrs {
    /// `rename = "wireName"`: the JSON name (or the enum value).
    pub rename: Option<String>,
    /// `nullable`: the value may be `null`.
    pub nullable: bool,
    /// `list_type = "atomic" | "set" | "map"`.
    pub list_type: Option<ListType>,
    /// `map_type = "atomic" | "granular"`.
    pub map_type: Option<MapType>,
    /// Every other keyword, as the schema writes it.
    pub keywords: Keywords,
    /// CEL rules (`validation(rule = "...", message = "...")`).
    pub rules: Vec<Value>,
}

/// The doc comment of an item, as the description of its schema.
pub fn doc(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').map(str::to_owned).unwrap_or(line))
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

fn string(meta: &ParseNestedMeta) -> Result<String> {
    Ok(meta.value()?.parse::<LitStr>()?.value())
}

fn strings(meta: &ParseNestedMeta) -> Result<Vec<String>> {
    let array: syn::ExprArray = meta.value()?.parse()?;
    array
        .elems
        .iter()
        .map(|e| match e {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Ok(s.value()),
            other => Err(Error::new(other.span(), "expected a string")),
        })
        .collect()
}

/// A literal as JSON: a number, a string or a boolean.
fn literal(meta: &ParseNestedMeta) -> Result<Value> {
    let expr: syn::Expr = meta.value()?.parse()?;
    literal_value(&expr)
}

fn literal_value(expr: &syn::Expr) -> Result<Value> {
    let (negative, inner) = match expr {
        syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(_), expr, .. }) => (true, &**expr),
        other => (false, other),
    };
    let syn::Expr::Lit(syn::ExprLit { lit, .. }) = inner else {
        return Err(Error::new(expr.span(), "expected a literal: a number, a string or a boolean"));
    };
    let sign = if negative { "-" } else { "" };
    let number = |text: String| {
        serde_json::from_str::<Value>(&format!("{sign}{text}"))
            .map_err(|_| Error::new(lit.span(), "expected a number JSON can hold"))
    };
    match lit {
        syn::Lit::Int(i) => number(i.base10_digits().to_owned()),
        syn::Lit::Float(f) => number(f.base10_digits().to_owned()),
        syn::Lit::Str(s) if !negative => Ok(Value::String(s.value())),
        syn::Lit::Bool(b) if !negative => Ok(Value::Bool(b.value)),
        _ => Err(Error::new(lit.span(), "expected a number, a string or a boolean")),
    }
}

fn integer(meta: &ParseNestedMeta) -> Result<Value> {
    let lit: syn::LitInt = meta.value()?.parse()?;
    let n: u64 = lit.base10_parse()?;
    Ok(Value::from(n))
}

fn flag(meta: &ParseNestedMeta) -> Result<bool> {
    if meta.input.peek(syn::Token![=]) { Ok(meta.value()?.parse::<LitBool>()?.value) } else { Ok(true) }
}

/// A CEL rule: `validation(rule = "...", message = "...",
/// message_expression = "...", reason = "...", field_path = "...")`.
fn rule(meta: &ParseNestedMeta) -> Result<Value> {
    let mut rule = serde_json::Map::new();
    meta.parse_nested_meta(|m| {
        let key = match m.path.get_ident().map(ToString::to_string).as_deref() {
            Some("rule") => "rule",
            Some("message") => "message",
            Some("message_expression") => "messageExpression",
            Some("reason") => "reason",
            Some("field_path") => "fieldPath",
            Some("optional_old_self") => {
                rule.insert("optionalOldSelf".into(), flag(&m)?.into());
                return Ok(());
            }
            _ => {
                return Err(m.error(
                    "unknown key of validation(...): expected rule, message, message_expression, reason, \
                     field_path or optional_old_self",
                ));
            }
        };
        rule.insert(key.into(), string(&m)?.into());
        Ok(())
    })?;
    if !rule.contains_key("rule") {
        return Err(meta.error("validation(...) needs `rule = \"<CEL expression>\"`"));
    }
    Ok(Value::Object(rule))
}

impl SchemaAttrs {
    /// The `#[schema(...)]` attributes among `attrs`.
    pub fn parse(attrs: &[Attribute]) -> Result<SchemaAttrs> {
        let mut out = SchemaAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("schema")) {
            attr.parse_nested_meta(|meta| out.one(&meta))?;
        }
        if !out.rules.is_empty() {
            out.keywords.insert("x-kubernetes-validations".into(), Value::Array(out.rules.clone()));
        }
        Ok(out)
    }

    fn one(&mut self, meta: &ParseNestedMeta) -> Result<()> {
        let Some(name) = meta.path.get_ident().map(ToString::to_string) else {
            return Err(meta.error("expected a key of #[schema(...)]"));
        };
        let keyword = |k: &str| k.to_owned();
        match name.as_str() {
            "rename" => self.rename = Some(string(meta)?),
            "nullable" => self.nullable = flag(meta)?,
            "validation" => self.rules.push(rule(meta)?),
            "list_type" => {
                self.list_type = Some(match string(meta)?.as_str() {
                    "atomic" => ListType::Atomic,
                    "set" => ListType::Set,
                    "map" => ListType::Map(self.list_map_keys().unwrap_or_default()),
                    _ => return Err(meta.error("list_type is \"atomic\", \"set\" or \"map\"")),
                });
            }
            "list_map_keys" => {
                let keys = strings(meta)?;
                match &mut self.list_type {
                    Some(ListType::Map(k)) => *k = keys,
                    _ => {
                        self.list_type = Some(ListType::Map(keys));
                    }
                }
            }
            "map_type" => {
                self.map_type = Some(match string(meta)?.as_str() {
                    "atomic" => MapType::Atomic,
                    "granular" => MapType::Granular,
                    _ => return Err(meta.error("map_type is \"atomic\" or \"granular\"")),
                });
            }
            "minimum" | "maximum" | "multiple_of" => {
                let value = literal(meta)?;
                if !value.is_number() {
                    return Err(meta.error(format!("{name} takes a number")));
                }
                let key = if name == "multiple_of" { keyword("multipleOf") } else { name.clone() };
                self.keywords.insert(key, value);
            }
            "exclusive_minimum" => {
                self.keywords.insert(keyword("exclusiveMinimum"), flag(meta)?.into());
            }
            "exclusive_maximum" => {
                self.keywords.insert(keyword("exclusiveMaximum"), flag(meta)?.into());
            }
            "min_length" | "max_length" | "min_items" | "max_items" | "min_properties" | "max_properties" => {
                let key = heck::ToLowerCamelCase::to_lower_camel_case(name.as_str());
                self.keywords.insert(key, integer(meta)?);
            }
            "unique_items" => {
                self.keywords.insert(keyword("uniqueItems"), flag(meta)?.into());
            }
            "pattern" | "format" | "title" => {
                self.keywords.insert(name.clone(), string(meta)?.into());
            }
            "default" => {
                self.keywords.insert(name.clone(), literal(meta)?);
            }
            "default_json" => {
                let lit: LitStr = meta.value()?.parse()?;
                let value = serde_json::from_str::<Value>(&lit.value())
                    .map_err(|e| Error::new(lit.span(), format!("default_json is not JSON: {e}")))?;
                self.keywords.insert(keyword("default"), value);
            }
            "preserve_unknown_fields" => {
                self.keywords.insert(keyword("x-kubernetes-preserve-unknown-fields"), flag(meta)?.into());
            }
            "embedded_resource" => {
                self.keywords.insert(keyword("x-kubernetes-embedded-resource"), flag(meta)?.into());
            }
            "int_or_string" => {
                self.keywords.insert(keyword("x-kubernetes-int-or-string"), flag(meta)?.into());
            }
            _ => {
                return Err(meta.error(format!(
                    "unknown key `{name}` of #[schema(...)]: expected rename, nullable, validation, list_type, \
                     list_map_keys, map_type, minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of, \
                     min_length, max_length, min_items, max_items, min_properties, max_properties, unique_items, \
                     pattern, format, title, default, default_json, preserve_unknown_fields, embedded_resource or \
                     int_or_string"
                )));
            }
        }
        Ok(())
    }

    fn list_map_keys(&self) -> Option<Vec<String>> {
        match &self.list_type {
            Some(ListType::Map(keys)) => Some(keys.clone()),
            _ => None,
        }
    }
}

impl ResourceAttrs {
    /// The `#[resource(...)]` attributes among `attrs`; `span` is the
    /// item's, for what is missing.
    pub fn parse(attrs: &[Attribute], span: proc_macro2::Span) -> Result<ResourceAttrs> {
        let mut out = ResourceAttrs::default();
        let mut seen = None;
        for attr in attrs.iter().filter(|a| a.path().is_ident("resource")) {
            seen = Some(attr.path().span());
            attr.parse_nested_meta(|meta| out.one(&meta))?;
        }
        let Some(attr_span) = seen else {
            return Err(Error::new(
                span,
                "#[derive(CustomResource)] needs #[resource(group = \"...\", version = \"...\", kind = \"...\")]",
            ));
        };
        for (name, value) in [("group", &out.group), ("version", &out.version), ("kind", &out.kind)] {
            if value.as_deref().is_none_or(str::is_empty) {
                return Err(Error::new(attr_span, format!("#[resource(...)] needs `{name} = \"...\"`")));
            }
        }
        Ok(out)
    }

    fn one(&mut self, meta: &ParseNestedMeta) -> Result<()> {
        let Some(name) = meta.path.get_ident().map(ToString::to_string) else {
            return Err(meta.error("expected a key of #[resource(...)]"));
        };
        match name.as_str() {
            "group" => self.group = Some(string(meta)?),
            "version" => self.version = Some(string(meta)?),
            "kind" => self.kind = Some(string(meta)?),
            "namespaced" => self.namespaced = flag(meta)?,
            "status" => {
                let lit: LitStr = meta.value()?.parse()?;
                let path: syn::Path = lit.parse().map_err(|_| Error::new(lit.span(), "status names a type: a path"))?;
                if path.segments.iter().any(|s| !s.arguments.is_none()) {
                    return Err(Error::new(lit.span(), "status names a type without type arguments"));
                }
                let text = quote::ToTokens::to_token_stream(&path).to_string().replace(' ', "");
                self.status = Some((text, lit.span()));
            }
            "plural" => self.plural = Some(string(meta)?),
            "singular" => self.singular = Some(string(meta)?),
            "shortname" => self.short_names.push(string(meta)?),
            "category" => self.categories.push(string(meta)?),
            "selectable" => self.selectable_fields.push(string(meta)?),
            "served" => self.served = Some(flag(meta)?),
            "deprecated" => {
                self.deprecated = true;
                if meta.input.peek(syn::Token![=]) {
                    self.deprecation_warning = Some(string(meta)?);
                }
            }
            "printcolumn" => {
                let mut column = serde_json::Map::new();
                meta.parse_nested_meta(|m| {
                    let key = match m.path.get_ident().map(ToString::to_string).as_deref() {
                        Some("name") => "name",
                        Some("type_") => "type",
                        Some("json_path") => "jsonPath",
                        Some("description") => "description",
                        Some("format") => "format",
                        Some("priority") => {
                            column.insert("priority".into(), integer(&m)?);
                            return Ok(());
                        }
                        _ => {
                            return Err(m.error(
                                "unknown key of printcolumn(...): expected name, type_, json_path, description, \
                                 format or priority",
                            ));
                        }
                    };
                    column.insert(key.into(), string(&m)?.into());
                    Ok(())
                })?;
                for needed in ["name", "type", "jsonPath"] {
                    if !column.contains_key(needed) {
                        let key = if needed == "type" {
                            "type_"
                        } else if needed == "jsonPath" {
                            "json_path"
                        } else {
                            needed
                        };
                        return Err(meta.error(format!("printcolumn(...) needs `{key} = \"...\"`")));
                    }
                }
                self.printer_columns.push(Value::Object(column));
            }
            "scale" => {
                let mut scale = serde_json::Map::new();
                meta.parse_nested_meta(|m| {
                    let key = match m.path.get_ident().map(ToString::to_string).as_deref() {
                        Some("spec_replicas_path") => "specReplicasPath",
                        Some("status_replicas_path") => "statusReplicasPath",
                        Some("label_selector_path") => "labelSelectorPath",
                        _ => {
                            return Err(m.error(
                                "unknown key of scale(...): expected spec_replicas_path, status_replicas_path or \
                                 label_selector_path",
                            ));
                        }
                    };
                    scale.insert(key.into(), string(&m)?.into());
                    Ok(())
                })?;
                for (needed, key) in
                    [("specReplicasPath", "spec_replicas_path"), ("statusReplicasPath", "status_replicas_path")]
                {
                    if !scale.contains_key(needed) {
                        return Err(meta.error(format!("scale(...) needs `{key} = \"...\"`")));
                    }
                }
                self.scale = Some(Value::Object(scale));
            }
            _ => {
                return Err(meta.error(format!(
                    "unknown key `{name}` of #[resource(...)]: expected group, version, kind, namespaced, status, \
                     plural, singular, shortname, category, printcolumn, selectable, scale, served or \
                     deprecated"
                )));
            }
        }
        Ok(())
    }
}
